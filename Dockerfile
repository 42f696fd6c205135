# Build stage: one self-contained binary (gateway, workers, migrations, catalog, PGlite files).
FROM oven/bun:1.4.5 AS build
WORKDIR /app
COPY package.json package-lock.json bunfig.toml tsconfig.json ./
# bun reads package-lock.json; lifecycle scripts are not needed for the build.
RUN bun install --ignore-scripts
COPY src ./src
COPY drizzle ./drizzle
COPY .ci/build.sh ./.ci/build.sh
# The build context has no .git (.dockerignore): `gateway --version` names the commit given here,
# e.g. `docker build --build-arg GATEWAY_COMMIT=$(git rev-parse --short HEAD) .`
ARG GATEWAY_COMMIT=""
RUN GATEWAY_COMMIT="$GATEWAY_COMMIT" BUN=bun bash .ci/build.sh dist/gateway

# Runtime stage: a slim base, a non-root user, nothing but the binary (and curl for the
# health check: the lightest probe a health check can start every few seconds).
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
  && rm -rf /var/lib/apt/lists/* \
  && useradd --system --uid 10001 --home /data gateway && mkdir -p /data && chown gateway /data
COPY --from=build /app/dist/gateway /usr/local/bin/gateway
USER gateway
WORKDIR /data
# PGlite's data, generated secrets and local video files live here: keep it on a volume.
VOLUME /data
# Bun's fetch limit is not set here: the binary applies its own (BUN_CONFIG_MAX_HTTP_REQUESTS,
# default 4096) at start.
ENV DATA_DIR=/data PORT=8080 HOST=0.0.0.0
EXPOSE 8080
# Readiness (the database answers), not mere liveness. The start period covers the boot-time
# wait for PostgreSQL (DB_CONNECT_TIMEOUT_SECONDS, default 60).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD curl -fsS -o /dev/null "http://127.0.0.1:${PORT}/readyz" || exit 1
# Migrations are embedded and applied at start; SIGTERM drains in-flight requests.
# `docker run IMAGE --check-config` validates an environment without starting.
ENTRYPOINT ["/usr/local/bin/gateway"]
