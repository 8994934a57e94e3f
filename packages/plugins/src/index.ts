export * from './errors.js';
export * from './docker-config.js';
export * from './oci-client.js';
export * from './artifact.js';
export * from './content-store.js';
export * from './content-server.js';
export * from './storage.js';
export * from './fetch-worker.js';
