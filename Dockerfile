# mcp-edge-validator on Node, production image (docs/deploy-docker.md).
#
# No container engine runs in this project's CI, so the same steps are proved without Docker by
# test/production/production-install.test.ts: the library and the command (packages/cli) packed, each built by its prepack,
# installed into a fresh folder with production dependencies only, `mcp-edge serve` started in
# front of a real MCP server, a valid and an invalid call, a schema pushed, SIGTERM, restart.

# Node 22 LTS (.ci/run runs the whole suite on Node 20, 22 and 24).

# --- build stage: dev dependencies, the build, then a pack of what the package ships ---------
FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages/cli/package.json packages/cli/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm pack --silent --pack-destination /tmp && npm pack --silent --workspace mcp-edge --pack-destination /tmp \
 && mv /tmp/mcp-edge-validator-*.tgz /tmp/mcp-edge-validator.tgz && mv /tmp/mcp-edge-[0-9]*.tgz /tmp/mcp-edge.tgz

# --- runtime stage: production dependencies only, non-root -------------------------------------
FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787 \
    STORE_FILE=/data/kv.json \
    SHUTDOWN_GRACE_MS=10000
WORKDIR /app
COPY --from=build /tmp/mcp-edge-validator.tgz /tmp/mcp-edge.tgz /tmp/
RUN echo '{"name":"edge-app","version":"1.0.0","private":true}' > package.json \
 && npm install --omit=dev --no-audit --no-fund /tmp/mcp-edge-validator.tgz /tmp/mcp-edge.tgz \
 && rm /tmp/mcp-edge-validator.tgz /tmp/mcp-edge.tgz && npm cache clean --force \
 && mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8787
# /healthz answers {"ok":true}; the Host check allows loopback names (ALLOWED_HOSTS must keep
# `localhost` in its list when you set it, or the probe gets 403).
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8787)+'/healthz',{headers:{host:'localhost'}}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The package's bin itself (a `#!/usr/bin/env node` script, so PID 1 is node, with no shell or
# npm in between): SIGTERM (docker stop) reaches the edge, which stops gracefully within
# SHUTDOWN_GRACE_MS and exits 0. Give `docker stop -t` more than that.
# production-install.test.ts runs this ENTRYPOINT and the HEALTHCHECK command above as written.
ENTRYPOINT ["/app/node_modules/.bin/mcp-edge"]
CMD ["serve"]
