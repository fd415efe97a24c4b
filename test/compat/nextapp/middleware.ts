// Protects /protected with next-auth's own getToken: it decrypts the session
// cookie latchkey set (jwt strategy, the same NEXTAUTH_SECRET). With database
// sessions the cookie is an opaque token getToken cannot read, so this
// middleware turns everyone away there; pages/account.tsx shows the check that
// works with both strategies (a server-side getSession call).
import { NextResponse, type NextRequest } from "next/server";
import { getToken } from "next-auth/jwt";

export async function middleware(req: NextRequest) {
  const token = await getToken({ req, secret: process.env.NEXTAUTH_SECRET });
  if (token) return NextResponse.next();
  // Off to sign-in on the public origin (NEXTAUTH_URL, as the client uses),
  // with a relative callbackUrl as next-auth's withAuth makes.
  const signIn = new URL("/api/auth/signin", process.env.NEXTAUTH_URL);
  signIn.searchParams.set("callbackUrl", req.nextUrl.pathname + req.nextUrl.search);
  return NextResponse.redirect(signIn);
}

export const config = { matcher: ["/protected"] };
