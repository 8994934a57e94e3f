// Real gRPC servers and a real xDS client (@grpc/grpc-js-xds) for the tests.
import * as grpc from '@grpc/grpc-js';
import * as xds from '@grpc/grpc-js-xds';

const identity = (b: Buffer) => b;

/** A unary service `/test.Echo/Call` answering with the server's name. */
export function startEchoServer(name: string): Promise<{ port: number; close: () => Promise<void> }> {
  const server = new grpc.Server();
  server.addService(
    {
      Call: {
        path: '/test.Echo/Call',
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    } as unknown as grpc.ServiceDefinition,
    {
      Call: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) =>
        cb(null, Buffer.from(name)),
    },
  );
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
      if (err) return reject(err);
      resolve({ port, close: () => new Promise((r) => server.tryShutdown(() => r())) });
    }),
  );
}

let registered = false;

/** An xDS client for `xds:///<target>`, bootstrapped to our ADS server as the given node. */
export function xdsClient(
  target: string,
  adsPort: number,
  nodeCluster: string,
): { call: () => Promise<string>; close: () => void } {
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify({
    xds_servers: [
      { server_uri: `127.0.0.1:${adsPort}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] },
    ],
    node: { id: `test-${nodeCluster}`, cluster: nodeCluster, locality: {} },
  });
  if (!registered) {
    xds.register();
    registered = true;
  }
  const client = new grpc.Client(`xds:///${target}`, grpc.credentials.createInsecure());
  return {
    call: () =>
      new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          '/test.Echo/Call',
          identity,
          identity,
          Buffer.from('hi'),
          { deadline: Date.now() + 5000 } as grpc.CallOptions,
          (err, res) => (err ? reject(err) : resolve(res!.toString())),
        );
      }),
    close: () => client.close(),
  };
}

export async function callMany(call: () => Promise<string>, n: number): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, n - i) }, call));
    for (const r of batch) counts.set(r, (counts.get(r) ?? 0) + 1);
  }
  return counts;
}

export async function eventually<T>(f: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  let err: unknown;
  while (Date.now() < end) {
    try {
      last = await f();
      if (ok(last)) return last;
    } catch (e) {
      err = e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `condition not met in ${timeoutMs} ms; last value ${JSON.stringify(last instanceof Map ? [...last] : last)}; last error ${String(err)}`,
  );
}
