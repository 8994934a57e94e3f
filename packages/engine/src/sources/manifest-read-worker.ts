// A worker thread of the manifest read pool: reads the files it is sent, one message each.
import { parentPort } from 'node:worker_threads';
import { readManifestFile, type ManifestReadOptions } from './manifest-file.js';

export interface ManifestReadRequest {
  file: string;
  options: ManifestReadOptions;
}

parentPort?.on('message', ({ file, options }: ManifestReadRequest) => {
  parentPort!.postMessage({ file, reading: readManifestFile(file, options) });
});
