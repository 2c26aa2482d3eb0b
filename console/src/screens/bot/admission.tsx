// The server's admission control now (issue 37), read from its public /metrics: what waits for a turn,
// the limit past which new messages are refused, and how many were refused since the server started.
import { ADMISSION_METRICS, METRICS_PATH } from '../../../../src/contract/metrics.ts';
import { useLoad } from '../../hooks.ts';

interface AdmissionNow {
  queued: number;
  limit: number;
  refused: number;
}

/** The sum of a series' samples (every label set) in the Prometheus text; undefined when it is absent. */
function sampleSum(text: string, name: string): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (line !== name && !line.startsWith(`${name} `) && !line.startsWith(`${name}{`)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum = (sum ?? 0) + value;
  }
  return sum;
}

async function readAdmission(): Promise<AdmissionNow | undefined> {
  const response = await fetch(METRICS_PATH);
  if (!response.ok) return undefined;
  const text = await response.text();
  const queued = sampleSum(text, ADMISSION_METRICS.queued);
  const limit = sampleSum(text, ADMISSION_METRICS.limit);
  // Absent: admission control is off (PARLEY_ADMISSION=off).
  if (queued === undefined || limit === undefined) return undefined;
  return { queued, limit, refused: sampleSum(text, ADMISSION_METRICS.refused) ?? 0 };
}

/** A line under the bot's overview: the server's queue against its limit, and the messages refused. */
export function AdmissionLine() {
  const { data } = useLoad(readAdmission, []);
  if (!data) return null;
  return (
    <p class="muted" aria-label="Admission control">
      Server load now: {data.queued} messages waiting for a turn (new ones are refused past {data.limit});{' '}
      {data.refused} refused with 429 since this server started.
    </p>
  );
}
