/**
 * What an operator sees of a process (`GET /metrics`, Prometheus text format, docs/operating.md): one
 * registry a process, made by `lifecycle.ts` and carried on the deps. Counters and histograms are observed
 * where the work happens; gauges of state held elsewhere (the database pool, the queue, circuit breakers)
 * are read at each scrape. Labels hold route patterns and fixed words, never paths or dataset ids: a
 * private dataset's id must not reach whoever reads the metrics, and unbounded labels would grow forever.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** How the gateway cluster's primary adds up a gauge over its worker processes. */
export type GaugeAggregation = 'sum' | 'max';

export interface GaugeReading {
  labels?: Record<string, string>;
  value: number;
}

export class Metrics {
  readonly registry = new Registry();
  /** Every answered request: `route` is the pattern that answered (`unmatched` when none did). */
  readonly requests: Histogram<'method' | 'route' | 'status'>;
  /** Gateway object answers by cache verdict (`HIT`, `MISS`, `BYPASS`) and the bytes of their bodies. */
  readonly gatewayAnswers: Counter<'cache'>;
  readonly gatewayBytes: Counter<'cache'>;
  /** Conversion jobs, from claim to finish, by outcome (`done`, `failed`). */
  readonly conversionJobs: Histogram<'outcome'>;
  /** Recordings converted (`converted`) or refused (`failed`), each timed. */
  readonly recordingConversions: Histogram<'outcome'>;
  readonly conversionSourceBytes: Counter;
  /** Source megabytes (10^6 bytes) a second, one observation per converted recording. */
  readonly conversionThroughput: Histogram;
  /** Circuit breakers by part (`gateway_cache_redis`, `rate_limits`): whether each is open now. */
  readonly #circuits = new Map<string, () => boolean>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    this.requests = new Histogram({
      name: 'nds_http_request_duration_seconds',
      help: 'Requests answered, by method, route pattern and status, with their durations in seconds',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.gatewayAnswers = new Counter({ name: 'nds_gateway_answers_total', help: 'Gateway object answers by cache verdict (HIT, MISS, BYPASS)', labelNames: ['cache'], registers });
    this.gatewayBytes = new Counter({ name: 'nds_gateway_sent_bytes_total', help: 'Body bytes of gateway object answers, by cache verdict', labelNames: ['cache'], registers });
    this.conversionJobs = new Histogram({
      name: 'nds_conversion_job_duration_seconds',
      help: 'Conversion jobs, from claim to finish, by outcome (done, failed)',
      labelNames: ['outcome'],
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
      registers,
    });
    this.recordingConversions = new Histogram({
      name: 'nds_conversion_recording_duration_seconds',
      help: 'Recordings converted or refused, by outcome (converted, failed), with their durations in seconds',
      labelNames: ['outcome'],
      buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
      registers,
    });
    this.conversionSourceBytes = new Counter({ name: 'nds_conversion_source_bytes_total', help: 'Bytes of source files of converted recordings', registers });
    this.conversionThroughput = new Histogram({
      name: 'nds_conversion_throughput_mb_per_second',
      help: 'Source megabytes (10^6 bytes) converted a second, one observation per converted recording',
      buckets: [0.5, 1, 2, 5, 10, 20, 50, 100, 200],
      registers,
    });
    this.gauge(
      'nds_circuit_open',
      'Whether the circuit breaker in front of a part is open (1: the part failed and is not asked until a probe succeeds) or closed (0)',
      () => [...this.#circuits].map(([part, isOpen]) => ({ labels: { part }, value: isOpen() ? 1 : 0 })),
      { labelNames: ['part'], aggregate: 'max' },
    );
  }

  /** Reports a circuit breaker's state under `part` at each scrape. */
  circuit(part: string, isOpen: () => boolean): void {
    this.#circuits.set(part, isOpen);
  }

  /**
   * A gauge read at each scrape from state held elsewhere. A reading that throws or takes longer than a
   * second is left out of that scrape (the scrape still answers).
   */
  gauge(name: string, help: string, read: () => GaugeReading[] | Promise<GaugeReading[]>, options: { labelNames?: string[]; aggregate?: GaugeAggregation } = {}): void {
    new Gauge({
      name,
      help,
      labelNames: options.labelNames ?? [],
      aggregator: options.aggregate ?? 'sum',
      registers: [this.registry],
      async collect() {
        this.reset();
        const readings = await withinSecond(read);
        for (const r of readings ?? []) {
          if (r.labels) this.set(r.labels, r.value);
          else this.set(r.value);
        }
      },
    });
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

async function withinSecond<T>(read: () => T | Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), 1000);
  });
  try {
    return await Promise.race([Promise.resolve().then(read), late]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
