// The k6 jslib text summary, fetched by k6 at run time (remote modules are a k6 feature):
// https://grafana.com/docs/k6/latest/javascript-api/jslib/k6-summary/
declare module 'https://jslib.k6.io/k6-summary/0.1.0/index.js' {
  export interface TextSummaryOptions {
    /** Prefix of every line. */
    indent?: string;
    enableColors?: boolean;
  }

  /** The classic k6 end-of-test text report of `data`. */
  export function textSummary(data: K6SummaryData, options?: TextSummaryOptions): string;
}
