// Reached only through middleware.ts, which let the request in after getToken
// decrypted latchkey's JWT session cookie.
import Link from "next/link";
import { Who } from "../components/Who";

export default function Protected() {
  return (
    <main>
      <h1>Protected page</h1>
      <p>The middleware checked the session cookie with <code>getToken</code> from <code>next-auth/jwt</code> before this page was served.</p>
      <Who />
      <nav>
        <Link href="/">Home</Link>
      </nav>
    </main>
  );
}
