// ChangeConfiguration as OCPP 2.0.1 SetVariables (B05): the 1.6 key as its component/variable
// (configuration-keys.ts), its Actual value. The answer's status in ChangeConfiguration's
// words: Accepted, Rejected and RebootRequired as they are; UnknownComponent,
// UnknownVariable and NotSupportedAttributeType are 1.6's NotSupported; the station's
// setVariableResult beside. A key with no 2.0.1 variable is refused (409) with the reason.
import { requestPart } from '../configuration-keys.js';
import { registerOperationForm201 } from '../operation-forms.js';
import { resolvedKeys } from './get-variables.js';

const STATUS_16: Record<string, string> = { Accepted: 'Accepted', Rejected: 'Rejected', RebootRequired: 'RebootRequired', UnknownComponent: 'NotSupported', UnknownVariable: 'NotSupported', NotSupportedAttributeType: 'NotSupported' };

registerOperationForm201('ChangeConfiguration', {
  toCall: (request) => {
    const resolved = resolvedKeys([String(request.key)]);
    if ('refused' in resolved) return resolved;
    return { action: 'SetVariables', request: { setVariableData: [{ ...requestPart(resolved[0]!), attributeValue: String(request.value) }] } };
  },
  toAnswer: (answer) => {
    const results = (answer.setVariableResult as Array<{ attributeStatus: string }> | undefined) ?? [];
    const status = results[0] ? (STATUS_16[results[0].attributeStatus] ?? 'Rejected') : 'Rejected';
    return { status, setVariableResult: results };
  },
});
