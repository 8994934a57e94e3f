// The ADS service definition is written out (no second load of Envoy's protos): it must be the
// service of ads.proto, and read and write messages exactly as @grpc/proto-loader's would.
import * as protoLoader from '@grpc/proto-loader';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from '@jest/globals';
import { ADS_METHODS, envoyRoot, INCLUDE_DIRS, loadAdsService } from '../src/index.js';

function protoLoaderService(): grpc.ServiceDefinition {
  const def = protoLoader.loadSync('envoy/service/discovery/v3/ads.proto', {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
    includeDirs: INCLUDE_DIRS,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    envoy: { service: { discovery: { v3: { AggregatedDiscoveryService: { service: grpc.ServiceDefinition } } } } };
  };
  return pkg.envoy.service.discovery.v3.AggregatedDiscoveryService.service;
}

const ANY = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const messages = {
  request: {
    version_info: '7',
    node: {
      id: 'envoy-1',
      cluster: 'apps/web',
      metadata: { fields: { zone: { string_value: 'a' } } },
      user_agent_name: 'envoy',
      user_agent_build_version: { version: { major_number: 1, minor_number: 36 } },
    },
    resource_names: ['a', 'b'],
    type_url: ANY,
    response_nonce: 'n1',
    error_detail: { code: 3, message: 'bad' },
  },
  response: {
    version_info: '8',
    resources: [{ type_url: ANY, value: Buffer.from([0x0a, 0x01, 0x63]) }],
    type_url: ANY,
    nonce: 'n2',
  },
  deltaRequest: {
    node: { id: 'envoy-2', cluster: 'apps/web' },
    type_url: ANY,
    resource_names_subscribe: ['x'],
    resource_names_unsubscribe: ['y'],
    initial_resource_versions: { x: '3' },
    response_nonce: 'n3',
  },
  deltaResponse: {
    system_version_info: '9',
    resources: [{ name: 'x', version: '4', resource: { type_url: ANY, value: Buffer.from([0x0a, 0x01, 0x78]) } }],
    type_url: ANY,
    removed_resources: ['y'],
    nonce: 'n4',
  },
};

describe('ADS service definition', () => {
  it('has the methods of ads.proto, both streams both ways', () => {
    const service = envoyRoot().lookupService('envoy.service.discovery.v3.AggregatedDiscoveryService');
    const fromProto = service.methodsArray.map((m) => ({
      name: m.name,
      request: m.requestType.split('.').pop(),
      response: m.responseType.split('.').pop(),
      streams: [!!m.requestStream, !!m.responseStream],
    }));
    expect(fromProto).toEqual(ADS_METHODS.map((m) => ({ ...m, streams: [true, true] })));
    const ours = loadAdsService();
    const theirs = protoLoaderService();
    for (const name of Object.keys(theirs)) {
      const { path, requestStream, responseStream, originalName } = theirs[name]!;
      expect(ours[name]).toMatchObject({ path, requestStream, responseStream, originalName });
    }
    expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort());
  });

  it('writes the bytes proto-loader writes and reads them back as it does', () => {
    const ours = loadAdsService();
    const theirs = protoLoaderService();
    const cases: [string, 'request' | 'response', object][] = [
      ['StreamAggregatedResources', 'request', messages.request],
      ['StreamAggregatedResources', 'response', messages.response],
      ['DeltaAggregatedResources', 'request', messages.deltaRequest],
      ['DeltaAggregatedResources', 'response', messages.deltaResponse],
    ];
    for (const [method, side, message] of cases) {
      const serialize = side === 'request' ? 'requestSerialize' : 'responseSerialize';
      const deserialize = side === 'request' ? 'requestDeserialize' : 'responseDeserialize';
      const bytes = theirs[method]![serialize](message);
      expect([method, side, ours[method]![serialize](message)]).toEqual([method, side, bytes]);
      expect([method, side, ours[method]![deserialize](bytes)]).toEqual([
        method,
        side,
        theirs[method]![deserialize](bytes),
      ]);
    }
  });
});
