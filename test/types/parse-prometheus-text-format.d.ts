/** Types of parse-prometheus-text-format 1.1.1 (it ships none): the families of a Prometheus text. */
declare module 'parse-prometheus-text-format' {
  export interface ParsedFamily {
    name: string
    help: string
    type: string
    metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }[]
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[]
}
