// Where a Gateway's proxy listens for each of its served ports: the infra IR (containerPort and
// the Service's targetPort) and the xDS IR (the Envoy listener's port) take it from here.
import { proxyListenPorts } from '@turnpike/api';
import { mergedListeners } from './gateways.js';
import { listenerProgrammable } from './listener-validity.js';
import { transport } from './listener-protocols.js';
import type { GatewayModel } from '../model.js';

/** Listen ports by `proxyPortKey(transport, port)`, for the ports of the Gateway's programmable listeners. */
export function gatewayListenPorts(gateway: GatewayModel): Map<string, number> {
  return proxyListenPorts(
    mergedListeners(gateway)
      .filter(listenerProgrammable)
      .map((l) => ({ transport: transport(l.spec.protocol), port: l.spec.port })),
  );
}
