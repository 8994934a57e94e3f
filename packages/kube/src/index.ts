export * from './client.js';
export * from './resources.js';
export * from './reflector.js';
export * from './kube-source.js';
export * from './status-writer.js';
export * from './metrics.js';
export * from './health-server.js';
export * from './leader-election.js';
