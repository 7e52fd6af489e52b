import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

// What the pass promotes to V8's old generation, by allocation site (bench/checkins.ts
// --promoted-profile). V8's sampling heap profiler normally reports only what is still live when
// it stops; with `includeObjectsCollectedByMajorGC` it also keeps the samples that a mark-compact
// freed, and without `...MinorGC` it drops those a scavenge freed. So the profile is what
// survived the young generation: the promotion that grows the old generation towards its limit
// and sets the peak RSS (issue 39).

export interface PromotedProfiler {
  /**
   * Stops sampling and writes the profile (Chrome DevTools' .heapprofile format, to open in its
   * Memory tab); returns its path and the sites that allocated most of it, as text lines.
   */
  stop(): Promise<{ path: string; topSites: string[] }>;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: ProfileNode[];
}
interface SamplingProfile {
  head: ProfileNode;
  samples: { size: number; nodeId: number }[];
}

/** The allocation sites (function, file:line) with the most sampled bytes, largest first. */
export function topAllocationSites(profile: SamplingProfile, count: number): string[] {
  const siteOf = new Map<number, string>();
  const visit = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    siteOf.set(
      node.id,
      `${functionName || '(anonymous)'} (${url.split('/').at(-1) ?? ''}:${lineNumber + 1})`,
    );
    for (const child of node.children ?? []) visit(child);
  };
  visit(profile.head);
  const bytes = new Map<string, number>();
  let total = 0;
  for (const { size, nodeId } of profile.samples) {
    const site = siteOf.get(nodeId) ?? '?';
    bytes.set(site, (bytes.get(site) ?? 0) + size);
    total += size;
  }
  const mb = (n: number) => `${(n / 1_048_576).toFixed(1)} MB`;
  return [
    `${mb(total)} survived the young generation, sampled; by allocation site:`,
    ...[...bytes]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([site, n]) => `  ${mb(n)}  ${site}`),
  ];
}

export async function startPromotedProfile(dir: string): Promise<PromotedProfiler> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: false,
  } as never);
  return {
    async stop() {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      session.disconnect();
      mkdirSync(dir, { recursive: true });
      const path = `${dir}/promoted-${process.pid}.heapprofile`;
      writeFileSync(path, JSON.stringify(profile));
      return { path, topSites: topAllocationSites(profile as unknown as SamplingProfile, 8) };
    },
  };
}
