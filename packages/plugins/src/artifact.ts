// The artifact layouts a plugin may be shipped in, and getting the plugin file out of them.
//
// 1. An image: exactly one layer, a gzip tar (OCI `...layer.v1.tar+gzip` or Docker
//    `...rootfs.diff.tar.gzip`) with `plugin.lua` or `plugin.wasm` at its root. Other files are
//    ignored. Built with `FROM scratch` + `COPY plugin.lua /`.
// 2. An OCI artifact: a layer whose media type is ours, the file itself, not archived:
//    `application/vnd.turnpike.plugin.lua.v1` or `application/vnd.turnpike.plugin.wasm.v1`
//    (other layers are ignored). Pushed with e.g. `oras push host/repo:tag plugin.lua:<type>`.
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { PluginFetchError } from './errors.js';
import { mediaTypeName, type Descriptor, type ImageManifest } from './oci-client.js';

export type PluginType = 'lua' | 'wasm';

export const PLUGIN_LAYER_MEDIA_TYPES: Record<PluginType, string> = {
  lua: 'application/vnd.turnpike.plugin.lua.v1',
  wasm: 'application/vnd.turnpike.plugin.wasm.v1',
};
const TAR_GZIP_MEDIA_TYPES = new Set([
  'application/vnd.oci.image.layer.v1.tar+gzip',
  'application/vnd.docker.image.rootfs.diff.tar.gzip',
]);

const gunzipAsync = promisify(gunzip);

export interface PluginLayer {
  layer: Descriptor;
  archived: boolean;
}

/** Picks the layer holding the plugin, or says why the manifest is not a plugin of this type. */
export function pluginLayer(manifest: ImageManifest, type: PluginType, where: string): PluginLayer {
  const other: PluginType = type === 'lua' ? 'wasm' : 'lua';
  const own = manifest.layers.find((l) => l.mediaType === PLUGIN_LAYER_MEDIA_TYPES[type]);
  if (own) return { layer: own, archived: false };
  if (manifest.layers.some((l) => l.mediaType === PLUGIN_LAYER_MEDIA_TYPES[other])) {
    throw new PluginFetchError('InvalidArtifact', `${where} holds a ${other} plugin but spec.type is ${type}`);
  }
  if (manifest.layers.length !== 1) {
    throw new PluginFetchError(
      'InvalidArtifact',
      `${where} has ${manifest.layers.length} layers; a plugin image has exactly one (a gzip tar with ` +
        `plugin.${type}) or a layer of media type ${PLUGIN_LAYER_MEDIA_TYPES[type]}`,
    );
  }
  const layer = manifest.layers[0]!;
  if (!TAR_GZIP_MEDIA_TYPES.has(layer.mediaType)) {
    throw new PluginFetchError(
      'InvalidArtifact',
      // The media type is the manifest's: named only if it has a media type's shape.
      `${where}: layer media type ${mediaTypeName(layer.mediaType)} is not a gzip tar ` +
        `(${[...TAR_GZIP_MEDIA_TYPES].join(', ')})`,
    );
  }
  return { layer, archived: true };
}

function rootName(path: string): string | undefined {
  const p = path.replace(/^(\.\/)+/, '').replace(/^\/+/, '');
  return p.includes('/') ? undefined : p;
}

async function fromTar(tar: Buffer, type: PluginType, where: string): Promise<Buffer> {
  const wanted = `plugin.${type}`;
  const otherName = `plugin.${type === 'lua' ? 'wasm' : 'lua'}`;
  let found: Buffer | undefined;
  let sawOther = false;
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header, stream, next) => {
      const name = rootName(header.name);
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => {
        if (name === wanted) chunks.push(c as Buffer);
      });
      stream.on('end', () => {
        if (name === wanted && header.type === 'file') found = Buffer.concat(chunks);
        if (name === otherName) sawOther = true;
        next();
      });
      stream.on('error', reject);
    });
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  ex.end(tar);
  try {
    await done;
  } catch {
    throw new PluginFetchError('InvalidArtifact', `${where}: the layer is not a valid tar archive`);
  }
  if (found) return found;
  throw new PluginFetchError(
    'InvalidArtifact',
    sawOther
      ? `${where} holds ${otherName} but spec.type is ${type}`
      : `${where}: the layer has no ${wanted} at its root`,
  );
}

function checkContent(content: Buffer, type: PluginType, where: string): void {
  if (type === 'wasm') {
    if (content.length < 8 || content.readUInt32BE(0) !== 0x0061736d)
      throw new PluginFetchError(
        'InvalidArtifact',
        `${where}: plugin.wasm is not a WebAssembly module (no \\0asm header)`,
      );
    return;
  }
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(content);
    if (text.includes('\0')) throw new Error('NUL byte');
  } catch {
    throw new PluginFetchError('InvalidArtifact', `${where}: plugin.lua is not UTF-8 text`);
  }
}

/** The plugin file from its layer's blob, decompressed within `maxBytes`, checked for its type. */
export async function extractPlugin(
  blob: Buffer,
  pl: PluginLayer,
  type: PluginType,
  maxBytes: number,
  where: string,
): Promise<Buffer> {
  let content: Buffer;
  if (!pl.archived) {
    content = blob;
  } else {
    let tar: Buffer;
    try {
      tar = await gunzipAsync(blob, { maxOutputLength: maxBytes + 1024 * 1024 });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
        throw new PluginFetchError('TooLarge', `${where}: the layer unpacks to more than ${maxBytes} bytes`);
      throw new PluginFetchError('InvalidArtifact', `${where}: the layer is not gzip (${err.code ?? 'unreadable'})`);
    }
    content = await fromTar(tar, type, where);
  }
  if (content.length > maxBytes)
    throw new PluginFetchError(
      'TooLarge',
      `${where}: plugin.${type} is ${content.length} bytes, over the limit of ${maxBytes}`,
    );
  checkContent(content, type, where);
  return content;
}
