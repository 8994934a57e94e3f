export * from './snapshot.js';
export * from './translate.js';
export * from './infra-ir.js';
export * from './hostnames.js';
export * from './compare.js';
export { SUPPORTED_FEATURES } from './gateway-classes.js';
export type { RouteResult } from './routes/route-result.js';
export * from './status-merge.js';
export * from './explain.js';
