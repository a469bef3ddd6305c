// doctor: free space on the data directory's file system.
import { existsSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { fail, pass, warn, type DoctorCheck } from './types.js';

const MiB = 1024 * 1024;

/** The closest existing directory (the data directory may not exist before the first start). */
function existingAncestor(path: string): string {
  let p = path;
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  return p;
}

export function judgeFreeSpace(freeBytes: number, totalBytes: number): 'pass' | 'warn' | 'fail' {
  const share = totalBytes > 0 ? freeBytes / totalBytes : 0;
  if (freeBytes < 100 * MiB || share < 0.02) return 'fail';
  if (freeBytes < 1024 * MiB || share < 0.1) return 'warn';
  return 'pass';
}

export const diskCheck: DoctorCheck = {
  name: 'disk',
  needsConfig: true,
  async run(env) {
    const dir = env.config!.data_dir;
    const at = existingAncestor(dir);
    const st = statfsSync(at);
    const free = st.bavail * st.bsize;
    const total = st.blocks * st.bsize;
    const detail = `${dir}: ${(free / MiB).toFixed(0)} MiB free of ${(total / MiB).toFixed(0)} MiB (${((free / total) * 100).toFixed(0)} %)`;
    const verdict = judgeFreeSpace(free, total);
    // The settings that bound what the gateway keeps: meter readings, and sessions with charger transactions (docs/chargers.md "Storage").
    const fix = 'free space (`sudo journalctl --vacuum-size=100M`, old files), lower store.readings_retention_days (meter readings) or store.sessions_retention_days (sessions and charger transactions), or use a larger SD card';
    if (verdict === 'fail') return [fail('disk', `${detail}: too little for the outbox and readings`, fix)];
    if (verdict === 'warn') return [warn('disk', `${detail}: getting low`, fix)];
    return [pass('disk', detail)];
  },
};
