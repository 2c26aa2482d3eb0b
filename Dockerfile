# Parley's container image: `podman build -t parley .` (or docker build), then
#   podman run -p 3000:3000 -v parley-data:/data parley
# docs/operations.md#containers says more; compose.yaml runs it with PostgreSQL and Redis.

# The base: Node.js 20 on Debian 12. CI builds it from a Debian base of its own (.ci/container-base.sh)
# and passes it here, since no image registry is reachable there.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
# better-sqlite3 and isolated-vm compile where no prebuilt binary matches.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
# npm ci installs, builds (its prepare script: server, console, webchat), then drops what only builds.
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund \
 && npm cache clean --force

FROM ${NODE_IMAGE}
# tini reaps the processes of SDK bots and forwards signals; bubblewrap is their OS sandbox when the
# container runs as root with the privileges it needs (docs/security.md); as the default user they are refused.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini bubblewrap ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system parley \
 && useradd --system --gid parley --home-dir /app --shell /usr/sbin/nologin parley \
 && mkdir /data && chown parley:parley /data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/examples ./examples
COPY --from=build /app/schemas ./schemas
COPY --from=build /app/node_modules ./node_modules
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
VOLUME /data
EXPOSE 3000
USER parley
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM: Parley finishes the requests in flight and closes its store.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/parley.js"]
CMD ["serve"]
