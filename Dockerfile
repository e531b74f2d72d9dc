# Parley in a container (docs/deploy.md). Not exercised in CI: see the guide.
# Node 26, the current LTS line (Active LTS since October 2026); the code itself runs on Node
# ≥ 20.19 (README), and every dependency admits both (packages/server/test/unit/engines.test.ts).
# Build stage: native modules (better-sqlite3) compile here, with the tools they need.
FROM node:26-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm ci
RUN npm run build && npm prune --omit=dev

# Run stage: no compilers, no sources beyond what runs, an unprivileged user.
FROM node:26-slim
ENV NODE_ENV=production \
    PARLEY_HOST=0.0.0.0 \
    PARLEY_PORT=8080 \
    PARLEY_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages/protocol/package.json ./packages/protocol/package.json
COPY --from=build /app/packages/server/package.json ./packages/server/package.json
COPY --from=build /app/packages/server/bin ./packages/server/bin
COPY --from=build /app/packages/server/dist ./packages/server/dist
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s \
  CMD node -e "fetch('http://127.0.0.1:8080/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=1", "--v8-pool-size=1", "--optimize-for-size", "packages/server/dist/parley.js", "serve"]
