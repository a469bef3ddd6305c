// GetLocalListVersion (OCPP 2.0.1 D02): the same call; the answer's versionNumber is 1.6's
// listVersion (0: no list installed, TC_D_09), kept under its 2.0.1 name too.
import { registerOperationForm201 } from '../operation-forms.js';

registerOperationForm201('GetLocalListVersion', {
  toCall: () => ({ action: 'GetLocalListVersion', request: {} }),
  toAnswer: (answer) => ({ listVersion: answer.versionNumber, versionNumber: answer.versionNumber }),
});
