/** Reads a store back with zarrita, as any Zarr v3 reader would. */
import * as zarr from 'zarrita';
import { FileSystemStore } from '@zarrita/storage';

export interface StoreGroup {
  attrs: Record<string, any>;
  shape: number[];
  dtype: string;
  /** Row-major [n_channels, n_samples]. */
  digital: ArrayLike<number>;
  scale: number[];
  offset: number[];
  chunks: number[];
}

export async function openStore(dir: string) {
  const store = new FileSystemStore(dir);
  const root = await zarr.open.v3(store, { kind: 'group' });
  return { root, attrs: root.attrs as Record<string, any> };
}

export async function readGroup(dir: string, name: string): Promise<StoreGroup> {
  const { root } = await openStore(dir);
  const group = await zarr.open.v3(root.resolve(name), { kind: 'group' });
  const array = await zarr.open.v3(root.resolve(`${name}/0`), { kind: 'array' });
  const chunk = await zarr.get(array);
  return {
    attrs: group.attrs as Record<string, any>,
    shape: array.shape,
    dtype: array.dtype,
    digital: chunk.data as ArrayLike<number>,
    scale: (array.attrs as any).scale,
    offset: (array.attrs as any).offset,
    chunks: array.chunks,
  };
}

export async function readView(dir: string, name: string, level: number) {
  const { root } = await openStore(dir);
  const array = await zarr.open.v3(root.resolve(`${name}/view/${level}`), { kind: 'array' });
  const chunk = await zarr.get(array);
  return { shape: array.shape, chunks: array.chunks, data: chunk.data as ArrayLike<number> };
}

export async function readEvents(dir: string) {
  const { root } = await openStore(dir);
  const group = await zarr.open.v3(root.resolve('events'), { kind: 'group' });
  const read = async (name: string) => {
    const array = await zarr.open.v3(root.resolve(`events/${name}`), { kind: 'array' });
    return array.shape[0] === 0 ? [] : Array.from((await zarr.get(array)).data as ArrayLike<number>);
  };
  return { attrs: group.attrs as Record<string, any>, onset: await read('onset'), duration: await read('duration'), code: await read('code') };
}
