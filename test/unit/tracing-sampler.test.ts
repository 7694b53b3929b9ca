/** OTEL_TRACES_SAMPLER and its argument as the specification names them; a bad value is refused, naming the variable. */
import { describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-node';
import { samplerFor } from '../../src/platform/tracing-otel.js';
import { TracingConfigError } from '../../src/platform/tracing-types.js';

/** Share of 2,000 root traces (ids spread evenly) the sampler keeps. */
function keptShare(env: Record<string, string>): number {
  const sampler = samplerFor(env);
  let kept = 0;
  for (let i = 1; i <= 2000; i++) {
    const traceId = (BigInt(i) * (2n ** 64n / 2000n)).toString(16).padStart(16, '0').padStart(32, '0');
    const r = sampler.shouldSample(ROOT_CONTEXT, traceId, 'x', SpanKind.INTERNAL, {}, []);
    if (r.decision === SamplingDecision.RECORD_AND_SAMPLED) kept++;
  }
  return kept / 2000;
}

describe('the trace sampler from the environment', () => {
  it('keeps every trace by default, none with always_off, the given share with a ratio', () => {
    expect(samplerFor({}).toString()).toMatch(/^ParentBased\{root=AlwaysOnSampler/);
    expect(keptShare({})).toBe(1);
    expect(keptShare({ OTEL_TRACES_SAMPLER: 'always_off' })).toBe(0);
    expect(
      samplerFor({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }).toString(),
    ).toMatch(/^ParentBased\{root=TraceIdRatioBased\{0\.1\}/);
    expect(keptShare({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' })).toBeCloseTo(0.1, 1);
    expect(keptShare({ OTEL_TRACES_SAMPLER: 'traceidratio' })).toBe(1);
  });

  it('refuses an unknown sampler or a ratio outside 0–1, naming the variable', () => {
    expect(() => samplerFor({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(TracingConfigError);
    expect(() => samplerFor({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/OTEL_TRACES_SAMPLER must be/);
    expect(() => samplerFor({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '10%' })).toThrow(
      /OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 \(got "10%"\)/,
    );
    expect(() => samplerFor({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(
      TracingConfigError,
    );
  });
});
