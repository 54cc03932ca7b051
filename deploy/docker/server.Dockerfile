# syntax=docker/dockerfile:1
# trellis-server: the control plane. Build from the repository root:
#   docker build -f deploy/docker/server.Dockerfile -t trellis-server:0.1.0 .
# Runs as uid 10001 on a read-only root file system: the only writable paths are /tmp and
# TRELLIS_DATA_DIR (/var/lib/trellis), both meant to be volumes.

ARG NODE_IMAGE=node:22-bookworm-slim

# 1. Build: every workspace compiled with tsc, the runtime packages packed as npm tarballs.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY packages/ packages/
RUN npm ci --no-audit --no-fund --ignore-scripts
RUN npx tsc -b packages/server
RUN mkdir /tarballs \
 && npm pack --pack-destination /tarballs \
      --workspace @trellis/core --workspace @trellis/contract --workspace @trellis/http \
      --workspace @trellis/providers --workspace @trellis/store-sql --workspace @trellis/web \
      --workspace @trellis/artifacts-fs --workspace @trellis/artifacts-s3 \
      --workspace @trellis/artifacts-gcs --workspace @trellis/server

# 2. Production dependencies only: the tarballs installed together, with both database drivers
#    (better-sqlite3 is compiled here when no prebuilt binary matches).
FROM ${NODE_IMAGE} AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /tarballs /tarballs
RUN echo '{"name":"trellis-server-image","private":true,"type":"module"}' > package.json \
 && npm install --omit=dev --no-audit --no-fund /tarballs/*.tgz pg@^8.23.1 better-sqlite3@^12.11.1 \
 && rm -rf /tarballs /root/.npm

# 3. Runtime: node, the installed packages, nothing else.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PATH=/app/node_modules/.bin:$PATH \
    HOST=0.0.0.0 \
    PORT=8080 \
    TRELLIS_DATA_DIR=/var/lib/trellis
WORKDIR /app
COPY --from=deps /app /app
RUN mkdir -p /var/lib/trellis && chown 10001:10001 /var/lib/trellis
USER 10001:10001
EXPOSE 8080
VOLUME ["/var/lib/trellis", "/tmp"]
ENTRYPOINT ["trellis-server"]
CMD ["serve"]
