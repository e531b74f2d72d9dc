import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HttpSeries } from '../../src/metrics/http-series.js';

// D53: the HTTP request series are counted in plain numbers (issue 29) and must render exactly as
// prom-client's own Counter and Histogram rendered the same observations before.
describe('HTTP request series (D53)', () => {
  const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
  // on a bound (le is inclusive), between bounds, past the last, several series
  const observations: Array<[string, string, number, number]> = [
    ['POST', '/api/v1/channels/:channelId/messages', 200, 0.0004],
    ['POST', '/api/v1/channels/:channelId/messages', 200, 0.001],
    ['POST', '/api/v1/channels/:channelId/messages', 200, 0.0031],
    ['POST', '/api/v1/channels/:channelId/messages', 400, 0.002],
    ['GET', '/api/v1/channels/:channelId/messages', 200, 0.7],
    ['GET', '/api/v1/bot/me', 200, 9],
    ['GET', 'unmatched', 404, 0.05],
    ['POST', '/api/v1/channels/:channelId/messages', 200, 0.2],
  ];

  const render = async (register: (r: client.Registry) => void): Promise<string> => {
    const r = new client.Registry();
    register(r);
    return r.metrics();
  };

  it('renders the text prom-client renders for the same requests', async () => {
    const expected = await render((r) => {
      const counter = new client.Counter({
        name: 'parley_http_requests_total',
        help: 'requests',
        labelNames: ['method', 'route', 'status'],
        registers: [r],
      });
      const histogram = new client.Histogram({
        name: 'parley_http_request_duration_seconds',
        help: 'durations',
        labelNames: ['method', 'route', 'status'],
        buckets: BOUNDS,
        registers: [r],
      });
      for (const [method, route, status, s] of observations) {
        counter.inc({ method, route, status: String(status) });
        histogram.observe({ method, route, status: String(status) }, s);
      }
    });
    const actual = await render((r) => {
      const series = new HttpSeries(BOUNDS);
      for (const [method, route, status, s] of observations)
        series.observe(method, route, status, s);
      r.registerMetric(
        series.counter('parley_http_requests_total', 'requests') as unknown as client.Metric,
      );
      r.registerMetric(
        series.histogram(
          'parley_http_request_duration_seconds',
          'durations',
        ) as unknown as client.Metric,
      );
    });
    // series in first-seen order on both sides: compare the lines as sets, and the counts
    const lines = (t: string) => t.split('\n').filter((l) => l !== '');
    expect(lines(actual).sort()).toEqual(lines(expected).sort());
    expect(actual).toContain(
      'parley_http_request_duration_seconds_bucket{le="0.001",method="POST",route="/api/v1/channels/:channelId/messages",status="200"} 2',
    );
    expect(actual).toContain(
      'parley_http_requests_total{method="POST",route="/api/v1/channels/:channelId/messages",status="200"} 4',
    );
    expect(actual).toContain(
      'parley_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/v1/bot/me",status="200"} 1',
    );
  });
});
