# Build stage: one self-contained binary (gateway, workers, migrations, catalog, PGlite files).
FROM oven/bun:1.4.5 AS build
WORKDIR /app
COPY package.json package-lock.json bunfig.toml tsconfig.json ./
# bun reads package-lock.json; lifecycle scripts are not needed for the build.
RUN bun install --ignore-scripts
COPY src ./src
COPY drizzle ./drizzle
COPY .ci/build.sh ./.ci/build.sh
RUN BUN=bun bash .ci/build.sh dist/gateway

# Runtime stage: a slim base, a non-root user, nothing but the binary.
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
  && rm -rf /var/lib/apt/lists/* \
  && useradd --system --uid 10001 --home /data gateway && mkdir -p /data && chown gateway /data
COPY --from=build /app/dist/gateway /usr/local/bin/gateway
USER gateway
WORKDIR /data
# Bun allows 256 concurrent outgoing fetches by default; a busy gateway needs more upstream calls.
ENV DATA_DIR=/data PORT=8080 HOST=0.0.0.0 BUN_CONFIG_MAX_HTTP_REQUESTS=4096
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s CMD curl -sf http://127.0.0.1:8080/healthz || exit 1
# Migrations are embedded and applied at start; SIGTERM drains in-flight requests.
ENTRYPOINT ["/usr/local/bin/gateway"]
