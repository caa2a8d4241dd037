# modelwatch: build stage compiles TypeScript; the runtime stage holds only dist/, config/ and
# production dependencies, and runs as a non-root user.
FROM node:20-bookworm-slim AS build
# better-sqlite3 compiles from source when no prebuilt binary can be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY config ./config
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
# Fewer glibc malloc arenas: some 5 MB less resident (deploy/systemd/modelwatch.service says why).
ENV MALLOC_ARENA_MAX=2
# journalctl and systemctl (package systemd; it is not run as init here) read the host's journal
# and units through mounts; nvidia-smi comes from the NVIDIA container runtime. docs/deployment.md.
RUN apt-get update \
 && apt-get install -y --no-install-recommends systemd \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# The load history (history.path); the image runs as node (uid 1000, gid 1000).
RUN mkdir -p /var/lib/modelwatch && chown node:node /var/lib/modelwatch
VOLUME ["/var/lib/modelwatch"]
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/config ./config
USER node
# The daemon's own liveness; Node 20 has fetch, so the image needs no curl.
# The check asks the daemon's own /healthz on loopback. With listen.tls set, run the container with
# -e MODELWATCH_HEALTHZ_URL=https://127.0.0.1:9464/healthz: the check then speaks TLS and, talking
# to itself, does not verify the certificate.
ENV MODELWATCH_HEALTHZ_URL=http://127.0.0.1:9464/healthz
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD ["node", "-e", "const u = new URL(process.env.MODELWATCH_HEALTHZ_URL); require(u.protocol === 'https:' ? 'node:https' : 'node:http').get(u, { rejectUnauthorized: false, timeout: 4000 }, (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1)).on('timeout', () => process.exit(1))"]
ENTRYPOINT ["node", "/app/dist/cli.js"]
CMD ["run", "-c", "/etc/modelwatch/modelwatch.yaml", "--listen", "0.0.0.0:9464"]
EXPOSE 9464
