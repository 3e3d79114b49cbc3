# syntax=docker/dockerfile:1

# Build: compile TypeScript with the full dependency set.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Runtime: production dependencies only, an init process, a non-root user.
FROM node:22-bookworm-slim AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    FLEETWATCH_CONFIG=/etc/fleetwatch/fleetwatch.yaml
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY openapi ./openapi
COPY schemas ./schemas
USER node
# tini forwards SIGTERM to node, so `docker stop` is a graceful shutdown.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/fleetwatch.js"]
CMD ["run"]
