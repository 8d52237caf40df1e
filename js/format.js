// Formatting numbers for people (the CLI, progress lines, error messages).

/** A byte count with its unit: 512 B, 1.5 KiB, 3.2 MiB, 1.60 GiB. @param {number} n */
export function fmtBytes(n) {
  if (n >= 1024 ** 3) return (n / 1024 ** 3).toFixed(2) + ' GiB';
  if (n >= 1024 ** 2) return (n / 1024 ** 2).toFixed(1) + ' MiB';
  if (n >= 1024) return (n / 1024).toFixed(1) + ' KiB';
  return n + ' B';
}
