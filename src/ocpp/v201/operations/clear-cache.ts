// ClearCache (OCPP 2.0.1 C11): the same call and answer as in 1.6 ({} -> {status: Accepted|Rejected}).
import { registerOperationForm201 } from '../operation-forms.js';

registerOperationForm201('ClearCache', {
  toCall: () => ({ action: 'ClearCache', request: {} }),
  toAnswer: (answer) => answer,
});
