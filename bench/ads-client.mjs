// The ADS client the benches open their proxy streams with: grpc-js and the Envoy protos of the xds
// package (built), so that a bench needs nothing the workspace does not have.
import { createRequire } from 'node:module';

const xdsRequire = createRequire(new URL('../packages/xds/package.json', import.meta.url));
export const grpc = xdsRequire('@grpc/grpc-js');
const protoLoader = xdsRequire('@grpc/proto-loader');
const { INCLUDE_DIRS } = await import('../packages/xds/dist/index.js');

/** The AggregatedDiscoveryService client constructor. */
export const Ads = grpc.loadPackageDefinition(
  protoLoader.loadSync('envoy/service/discovery/v3/ads.proto', {
    keepCase: true,
    longs: String,
    enums: String,
    oneofs: true,
    includeDirs: INCLUDE_DIRS,
  }),
).envoy.service.discovery.v3.AggregatedDiscoveryService;
