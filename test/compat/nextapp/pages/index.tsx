import Link from "next/link";
import { Who } from "../components/Who";

export default function Home() {
  return (
    <main>
      <h1>Next.js app on latchkey</h1>
      <Who />
      <nav>
        <Link href="/protected">Protected page (middleware)</Link> · <Link href="/account">Account (server-side)</Link>
      </nav>
    </main>
  );
}
