# syntax=docker/dockerfile:1
# fleetwatch: one image for the monitor (`run`, the default), the CLI and the simulator (`simulate`).
#   docker build -t fleetwatch .
#   docker run --rm -e FLEETWATCH_CONFIG=/etc/fleetwatch/fleetwatch.yaml -v ./my.yaml:/etc/fleetwatch/fleetwatch.yaml:ro fleetwatch
ARG NODE_IMAGE=node:22-bookworm-slim

# Build: bundle the command (dist/bin/) and the console (dist/console/) with the full dependency set.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY console ./console
COPY scripts ./scripts
RUN npm run build

# Runtime: production dependencies only, an init process, a non-root user.
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
# glibc's malloc raises its trim and mmap thresholds to the largest block it has freed (up to
# 32 MB), so one large answer leaves that much free memory held by the process for good; fixed at
# 128 KB, freed memory goes back to the system. V8 lets a thread's young generation grow to 32 MB
# and keeps it until it sees the process idle; 2 MB semi-spaces keep the daemon thread small (the
# poll thread, which makes the polls, keeps V8's default). README: Operations, Memory.
ENV NODE_ENV=production \
    FLEETWATCH_CONFIG=/etc/fleetwatch/fleetwatch.yaml \
    MALLOC_TRIM_THRESHOLD_=131072 \
    MALLOC_MMAP_THRESHOLD_=131072 \
    NODE_OPTIONS=--max-semi-space-size=2
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY openapi ./openapi
COPY schemas ./schemas
# The files stay root's: the process may read its code, not change it.
USER node
# /metrics, /healthz, /readyz and the API (http.port; http.host must be 0.0.0.0 in a container).
EXPOSE 9464
# No curl in the image: Node's own fetch asks /healthz (liveness: the process serves requests).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# tini is PID 1 and forwards SIGTERM to node, so `docker stop` is a graceful shutdown.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/fleetwatch.js"]
CMD ["run"]
