// A real Next.js app with no [...nextauth] route: every /api/auth/* request is
// proxied to latchkey. Next.js computes rewrites at `next build` time (they go
// into .next/routes-manifest.json; `next start` does not read them again), so
// LATCHKEY_ORIGIN must be set when building.
const { PHASE_PRODUCTION_BUILD } = require("next/constants");

/** @type {(phase: string) => import('next').NextConfig} */
module.exports = (phase) => {
  const latchkey = process.env.LATCHKEY_ORIGIN;
  if (phase === PHASE_PRODUCTION_BUILD && !latchkey) throw new Error("set LATCHKEY_ORIGIN (e.g. http://127.0.0.1:3000) for `next build`");
  return {
    async rewrites() {
      return [{ source: "/api/auth/:path*", destination: `${latchkey}/api/auth/:path*` }];
    },
    // The test suite builds offline: no lint step, no image optimisation.
    eslint: { ignoreDuringBuilds: true },
    images: { unoptimized: true },
    poweredByHeader: false,
    // This folder has its own lockfile beside test/compat's: it is the workspace root.
    outputFileTracingRoot: __dirname,
  };
};
