// The signed-in state as next-auth/react's useSession sees it, with the
// sign-in and sign-out buttons of the real client.
import { signIn, signOut, useSession } from "next-auth/react";

export function Who() {
  const { data: session, status } = useSession();
  if (status === "loading") return <p data-testid="status">Loading…</p>;
  if (!session) {
    return (
      <>
        <p data-testid="status">Not signed in.</p>
        <button onClick={() => signIn("idp")}>Sign in with Company SSO</button>
      </>
    );
  }
  return (
    <>
      <p data-testid="status">
        Signed in as <strong data-testid="email">{session.user?.email}</strong>
        {session.user?.name ? ` (${session.user.name})` : ""}
      </p>
      <button onClick={() => signOut({ callbackUrl: "/" })}>Sign out</button>
    </>
  );
}
