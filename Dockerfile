# syntax=docker/dockerfile:1
# One image for the API, the worker and the migration job (docker-compose.yml picks the command).

# ---- build: install everything, compile TypeScript, then drop dev dependencies -------------------
FROM node:20-bookworm-slim AS build
WORKDIR /app

# Manifests first, so the install layer is reused until a dependency changes. The install needs every
# workspace's package.json: add a line here when a new app or lib is created.
COPY package.json package-lock.json ./
COPY apps/api/package.json apps/api/
COPY apps/worker/package.json apps/worker/
COPY apps/web/package.json apps/web/
COPY libs/config/package.json libs/config/
COPY libs/contract/package.json libs/contract/
COPY libs/db/package.json libs/db/
COPY libs/domain/package.json libs/domain/
COPY libs/queue/package.json libs/queue/
COPY libs/redis/package.json libs/redis/
COPY libs/stock/package.json libs/stock/
# npm install, not npm ci: see .ci/run (the lockfile lacks other platforms' optional packages).
RUN --mount=type=cache,target=/root/.npm npm install --no-audit --no-fund

COPY tsconfig.json tsconfig.base.json ./
COPY apps apps
COPY libs libs
# The storefront is built too: the API serves apps/web/dist on its own port.
RUN npx tsc -b tsconfig.json && npm run build -w @flash-sale/web && npm prune --omit=dev --no-audit --no-fund

# Collect exactly what runs: node_modules (its @flash-sale/* entries are relative symlinks to the
# workspaces), each workspace's package.json and dist, and the Lua scripts Redis loads at boot.
RUN mkdir -p /out \
 && cp -a package.json node_modules /out/ \
 && for pkg in apps/* libs/*; do mkdir -p "/out/$pkg" && cp -a "$pkg/package.json" "$pkg/dist" "/out/$pkg/"; done \
 && cp -a libs/redis/lua /out/libs/redis/

# ---- runtime -------------------------------------------------------------------------------------
FROM node:20-bookworm-slim AS runtime
WORKDIR /app
COPY --from=build /out ./
USER node
EXPOSE 3000
CMD ["node", "apps/api/dist/main.js"]
