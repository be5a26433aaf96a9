# syntax=docker/dockerfile:1
# Build stage: install everything, compile TypeScript to dist/ and the agent console to dist/console.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json vite.console.config.ts ./
COPY bin ./bin
COPY src ./src
COPY migrations ./migrations
RUN npm run build && npm prune --omit=dev

# Runtime stage: production dependencies and compiled code only, as a non-root user.
FROM node:20-bookworm-slim
# A 1 GB heap limit: the service's live heap is 40-60 MB, and with the default limit (a quarter
# of the machine's memory, up to 4 GB) V8 lets garbage pile up to ~300 MB before its first full
# collection; with this one a process peaks near 180 MB (README, Throughput). Override with -e.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 INBOX_DATA_DIR=/data NODE_OPTIONS=--max-old-space-size=1024
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
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "bin/inbox.js"]
CMD ["serve"]
