# The image runs on a current LTS; the package itself supports Node >= 20.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY jobs ./jobs
COPY migrations ./migrations
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# A container's port is reached from outside its network namespace: listen on every interface here
# (the default, 127.0.0.1, would be unreachable). Set STATUS_TOKEN when the port is published.
ENV HTTP_HOST=0.0.0.0
# The shipped heap policy (src/runtime/heap-policy.ts): a backfill peaks at ~140 MB RSS instead of
# ~200 MB. A NODE_OPTIONS in your environment replaces it: include these two flags in yours. It
# applies to every command run in the image (migrate, doctor, the simulator), harmlessly.
ENV NODE_OPTIONS="--max-old-space-size=1024 --max-semi-space-size=8"
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 9464
ENTRYPOINT ["node", "dist/src/cli/main.js"]
