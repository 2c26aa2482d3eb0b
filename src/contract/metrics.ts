/**
 * The path of the Prometheus metrics (`GET /metrics`, public: counts only) and the names of the series
 * that the console reads there too: `src/metrics.ts` declares them with these names.
 */
export const METRICS_PATH = '/metrics';

/** Admission control's series (`domain/queue/admission.ts`). */
export const ADMISSION_METRICS = {
  admitted: 'parley_admission_admitted_total',
  refused: 'parley_admission_refused_total',
  queued: 'parley_admission_queued',
  entering: 'parley_admission_entering',
  limit: 'parley_admission_limit',
  turnsPerSecond: 'parley_admission_turns_per_second',
} as const;
