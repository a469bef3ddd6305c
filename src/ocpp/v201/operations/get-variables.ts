// GetConfiguration as OCPP 2.0.1 GetVariables (B06): each 1.6 key as its component/variable
// (configuration-keys.ts), the Actual value. The answer in GetConfiguration's shape: a
// variable the station answered Accepted is a configurationKey (readonly when the device
// model says ReadOnly), every other an unknownKey; the station's getVariableResult beside.
// Refused (409): no keys (a station's whole configuration is its device model), a key with no
// 2.0.1 variable, and more keys than the station takes in one GetVariables
// (DeviceDataCtrlr.ItemsPerMessage[GetVariables] of its device model, B06.FR.05).
import { componentVariableOf, keyOf, requestPart, type ComponentVariable } from '../configuration-keys.js';
import { registerOperationForm201 } from '../operation-forms.js';

interface VariableResult {
  readonly attributeStatus: string;
  readonly attributeValue?: string;
  readonly component: { readonly name: string };
  readonly variable: { readonly name: string; readonly instance?: string };
}

/** The keys as 2.0.1 variables, or the first reason one has none. */
export function resolvedKeys(keys: readonly string[]): ComponentVariable[] | { refused: string } {
  const resolved: ComponentVariable[] = [];
  for (const key of keys) {
    const cv = componentVariableOf(key);
    if ('none' in cv) return { refused: `the OCPP 1.6 key ${key} has no 2.0.1 variable: ${cv.none}` };
    if ('unknown' in cv) return { refused: `the OCPP 1.6 key ${key} is not one the gateway maps to a 2.0.1 variable (src/ocpp/v201/configuration-keys.json); give it as Component.Variable` };
    resolved.push(cv);
  }
  return resolved;
}

registerOperationForm201('GetConfiguration', {
  toCall: (request, ctx) => {
    const keys = (request.key as string[] | undefined) ?? [];
    if (keys.length === 0) return { refused: `GetConfiguration without keys has no 2.0.1 form: a station's whole configuration is its device model (GET /api/v1/chargers/${ctx.chargePointId}/device-model)` };
    const resolved = resolvedKeys(keys);
    if ('refused' in resolved) return resolved;
    const max = Number(ctx.deviceModel?.actualValue(ctx.chargePointId, 'DeviceDataCtrlr', 'ItemsPerMessage', 'GetVariables') ?? NaN);
    if (Number.isInteger(max) && max > 0 && resolved.length > max) return { refused: `the station takes at most ${max} variables per GetVariables (DeviceDataCtrlr.ItemsPerMessage[GetVariables] in its device model), ${resolved.length} were asked for: ask in parts` };
    return { action: 'GetVariables', request: { getVariableData: resolved.map(requestPart) } };
  },
  toAnswer: (answer, ctx) => {
    const results = (answer.getVariableResult as VariableResult[] | undefined) ?? [];
    const configurationKey = results
      .filter((r) => r.attributeStatus === 'Accepted')
      .map((r) => ({
        key: keyOf(r),
        readonly: ctx.deviceModel?.mutability(ctx.chargePointId, r.component.name, r.variable.name, r.variable.instance ?? '') === 'ReadOnly',
        ...(r.attributeValue === undefined ? {} : { value: r.attributeValue }),
      }));
    const unknownKey = results.filter((r) => r.attributeStatus !== 'Accepted').map(keyOf);
    return { configurationKey, ...(unknownKey.length > 0 ? { unknownKey } : {}), getVariableResult: results };
  },
});
