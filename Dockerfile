# Multi-stage build of the controller image; runs as a non-root user.
FROM node:20-bookworm-slim AS build
WORKDIR /src
ENV COREPACK_ENABLE_DOWNLOAD_PROMPT=0
COPY . .
# --legacy: pnpm 10 deploys from a workspace without injected packages only so (packages/cli/test/deploy-layout.test.ts).
RUN corepack enable pnpm && pnpm install --frozen-lockfile && pnpm run build && pnpm deploy --filter @turnpike/cli --prod --legacy /out

FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /out /app
USER 65532:65532
ENTRYPOINT ["node", "/app/dist/main.js"]
