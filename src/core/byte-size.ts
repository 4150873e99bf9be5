/** Bytes in powers of 1024, as limits are set: `17 bytes`, `12 KiB`, `1.5 GiB`. */
export function bytesText(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** Bytes held against a limit (null: none), in words: `1.2 GiB of 10 GiB`, `3.0 GiB (no limit)`. */
export function heldText(used: number, limit: number | null): string {
  return limit === null ? `${bytesText(used)} (no limit)` : `${bytesText(used)} of ${bytesText(limit)}`;
}

/** Bytes in powers of 1000, as file sizes are listed: `17 B`, `12.3 kB`, `1.5 GB`. */
export function decimalBytesText(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}
