/**
 * Request traces over OTLP/HTTP (JSON), with the official OpenTelemetry packages. Imported
 * dynamically by the composition root only when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set: unset, none of these packages is loaded and the
 * request record's hooks do nothing (src/http/request-log.ts).
 *
 * Contexts are passed explicitly (no global context manager): a request's spans hang off its
 * root span, kept in its record. A client's W3C `traceparent` is continued; each upstream
 * attempt sends the traceparent of its own span.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type TextMapGetter,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { Attrs, RequestTracer, TraceSpan } from "./request-log";

export interface TracingOptions {
  /** The OTLP/HTTP traces URL (…/v1/traces). */
  url: string;
  serviceName: string;
  serviceVersion?: string;
}

const headerGetter: TextMapGetter<Headers> = {
  get: (h, key) => h.get(key) ?? undefined,
  keys: (h) => [...h.keys()],
};

function clean(attrs: Attrs): Attributes {
  const out: Attributes = {};
  for (const k in attrs) if (attrs[k] !== undefined) out[k] = attrs[k];
  return out;
}

class OtelSpan implements TraceSpan {
  constructor(readonly span: Span) {}
  set(attrs: Attrs): void {
    this.span.setAttributes(clean(attrs));
  }
  rename(name: string): void {
    this.span.updateName(name);
  }
  traceparent(): string {
    const c = this.span.spanContext();
    return `00-${c.traceId}-${c.spanId}-0${c.traceFlags & 1}`;
  }
  end(error?: string): void {
    if (error !== undefined) this.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    this.span.end();
  }
}

export function otlpTracer(o: TracingOptions): RequestTracer {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": o.serviceName,
      ...(o.serviceVersion && { "service.version": o.serviceVersion }),
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: o.url }) })],
  });
  const tracer = provider.getTracer("model-gateway");
  const propagator = new W3CTraceContextPropagator();
  return {
    begin(request, name) {
      const parent = request.headers.has("traceparent")
        ? propagator.extract(ROOT_CONTEXT, request.headers, headerGetter)
        : ROOT_CONTEXT;
      return new OtelSpan(
        tracer.startSpan(
          name,
          { kind: SpanKind.SERVER, attributes: { "http.request.method": request.method } },
          parent,
        ),
      );
    },
    child(parent, name, attrs) {
      const ctx = trace.setSpan(ROOT_CONTEXT, (parent as OtelSpan).span);
      const kind = name.startsWith("chat ") ? SpanKind.CLIENT : SpanKind.INTERNAL;
      return new OtelSpan(tracer.startSpan(name, { kind, attributes: attrs && clean(attrs) }, ctx));
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
