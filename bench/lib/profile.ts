import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  top: { name: string; where: string; selfMs: number; percent: number }[];
}

/** Self time per function (summed over call sites) of every `.cpuprofile` in `dir`, largest first. */
export async function summarizeProfiles(dir: string, limit = 25): Promise<ProfileSummary[]> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.cpuprofile'));
  const summaries: ProfileSummary[] = [];
  for (const file of files) {
    const profile = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map<string, { name: string; where: string; us: number }>();
    let total = 0;
    profile.samples.forEach((id, i) => {
      const us = profile.timeDeltas[i] ?? 0;
      total += us;
      const frame = byId.get(id)?.callFrame;
      if (!frame) return;
      const name = frame.functionName || '(anonymous)';
      const where = frame.url
        ? `${frame.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '~/')}:${frame.lineNumber + 1}`
        : '';
      const key = `${name}@${where}`;
      const entry = self.get(key) ?? { name, where, us: 0 };
      entry.us += us;
      self.set(key, entry);
    });
    summaries.push({
      file,
      totalMs: total / 1000,
      top: [...self.values()]
        .sort((a, b) => b.us - a.us)
        .slice(0, limit)
        .map((e) => ({
          name: e.name,
          where: e.where,
          selfMs: e.us / 1000,
          percent: total ? (100 * e.us) / total : 0,
        })),
    });
  }
  return summaries.sort((a, b) => b.totalMs - a.totalMs);
}
