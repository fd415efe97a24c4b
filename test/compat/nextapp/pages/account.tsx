// Protected on the server by asking latchkey who the user is (getSession with
// the request's cookies, i.e. GET /api/auth/session): works with database and
// jwt sessions alike, where the middleware's getToken only reads JWTs.
import type { GetServerSideProps } from "next";
import type { Session } from "next-auth";
import { getSession } from "next-auth/react";
import Link from "next/link";
import { Who } from "../components/Who";

// `session` also primes _app's SessionProvider (next-auth's pattern), which
// takes it out of the page's props; `email` is what this page renders.
type Props = { session: Session; email: string | null };

export const getServerSideProps: GetServerSideProps<Props> = async (ctx) => {
  const session = await getSession({ req: ctx.req });
  if (!session) {
    return { redirect: { destination: `/api/auth/signin?callbackUrl=${encodeURIComponent(ctx.resolvedUrl)}`, permanent: false } };
  }
  return { props: { session, email: session.user?.email ?? null } };
};

export default function Account({ email }: Props) {
  return (
    <main>
      <h1>Account</h1>
      <p>
        Server-side: <span data-testid="server-email">{email}</span>
      </p>
      <Who />
      <nav>
        <Link href="/">Home</Link>
      </nav>
    </main>
  );
}
