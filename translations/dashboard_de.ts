<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>cloop::dashboard::ApprovalsPage</name>
    <message>
        <source>State</source>
        <translation>Status</translation>
    </message>
    <message>
        <source>waiting for approval</source>
        <translation>wartet auf Genehmigung</translation>
    </message>
    <message>
        <source>&amp;Approve…</source>
        <translation>&amp;Genehmigen…</translation>
    </message>
    <message>
        <source>&amp;Deny…</source>
        <translation>&amp;Ablehnen…</translation>
    </message>
    <message>
        <source>Forwarder</source>
        <translation>Forwarder</translation>
    </message>
    <message>
        <source>Project</source>
        <translation>Projekt</translation>
    </message>
    <message>
        <source>Asked by</source>
        <translation>Angefragt von</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Begründung</translation>
    </message>
    <message>
        <source>For</source>
        <translation>Dauer</translation>
    </message>
    <message>
        <source>Executor</source>
        <translation>Executor</translation>
    </message>
    <message>
        <source>Asked at</source>
        <translation>Angefragt am</translation>
    </message>
    <message>
        <source>Filter the requests waiting for you</source>
        <translation>Auf Sie wartende Anfragen filtern</translation>
    </message>
    <message>
        <source>Nothing waits for your decision.</source>
        <translation>Keine Anfrage wartet auf Ihre Entscheidung.</translation>
    </message>
    <message>
        <source>Decided by</source>
        <translation>Entschieden von</translation>
    </message>
    <message>
        <source>Why</source>
        <translation>Entscheidungsgrund</translation>
    </message>
    <message>
        <source>Filter your requests</source>
        <translation>Eigene Anfragen filtern</translation>
    </message>
    <message>
        <source>You have not asked for a device.</source>
        <translation>Sie haben noch kein Gerät angefragt.</translation>
    </message>
    <message>
        <source>Decided at</source>
        <translation>Entschieden am</translation>
    </message>
    <message>
        <source>Filter the history</source>
        <translation>Verlauf filtern</translation>
    </message>
    <message>
        <source>Waiting for you</source>
        <translation>Wartet auf Sie</translation>
    </message>
    <message>
        <source>Your requests</source>
        <translation>Ihre Anfragen</translation>
    </message>
    <message>
        <source>History</source>
        <translation>Verlauf</translation>
    </message>
    <message>
        <source>Approvals</source>
        <translation>Genehmigungen</translation>
    </message>
    <message>
        <source>Deny request %1</source>
        <translation>Anfrage %1 ablehnen</translation>
    </message>
    <message>
        <source>%1 asked for %2 for %3. They will see your reason.</source>
        <translation>%1 hat %2 für %3 angefragt und bekommt Ihre Begründung zu sehen.</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>Ablehnen</translation>
    </message>
    <message>
        <source>any</source>
        <translation>beliebig</translation>
    </message>
    <message>
        <source>Expires</source>
        <translation>Läuft ab</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <source>not decided yet</source>
        <translation>noch nicht entschieden</translation>
    </message>
    <message>
        <source>no reason given</source>
        <translation>ohne Begründung</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ApproveDialog</name>
    <message>
        <source>Approve request %1</source>
        <translation>Anfrage %1 genehmigen</translation>
    </message>
    <message>
        <source>Approve</source>
        <translation>Genehmigen</translation>
    </message>
    <message>
        <source>as requested (%1)</source>
        <translation>wie angefragt (%1)</translation>
    </message>
    <message>
        <source>any executor, as requested</source>
        <translation>beliebiger Executor, wie angefragt</translation>
    </message>
    <message>
        <source>Forwarder:</source>
        <translation>Forwarder:</translation>
    </message>
    <message>
        <source>Project:</source>
        <translation>Projekt:</translation>
    </message>
    <message>
        <source>Asked by:</source>
        <translation>Angefragt von:</translation>
    </message>
    <message>
        <source>Because:</source>
        <translation>Begründung:</translation>
    </message>
    <message>
        <source>&amp;How long:</source>
        <translation>&amp;Dauer:</translation>
    </message>
    <message>
        <source>&amp;Executor:</source>
        <translation>&amp;Executor:</translation>
    </message>
    <message>
        <source>How long: write a duration such as 4h or 90m, or keep what was requested.</source>
        <translation>Dauer: Eine Zeitspanne wie 4h oder 90m angeben oder die angefragte beibehalten.</translation>
    </message>
    <message>
        <source>An approval may shorten the time asked for, not lengthen it.</source>
        <translation>Eine Genehmigung kann die angefragte Dauer verkürzen, aber nicht verlängern.</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1, %2</translation>
    </message>
    <message>
        <source>Asked for:</source>
        <translation>Erbeten:</translation>
    </message>
    <message>
        <source>%1, on any executor</source>
        <translation>%1, auf jedem Executor</translation>
    </message>
    <message>
        <source>%1, on %2 only</source>
        <translation>%1, nur auf %2</translation>
    </message>
    <message>
        <source>Sandbox interface:</source>
        <translation>Sandbox-Schnittstelle:</translation>
    </message>
    <message>
        <source>Request expires:</source>
        <translation>Anfrage läuft ab:</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>Device:</source>
        <translation>Gerät:</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::AuditPage</name>
    <message>
        <source>When</source>
        <translation>Zeitpunkt</translation>
    </message>
    <message>
        <source>Who</source>
        <translation>Wer</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>Aktion</translation>
    </message>
    <message>
        <source>Subject</source>
        <translation>Objekt</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>Details</translation>
    </message>
    <message>
        <source>Filter by who, action, subject or detail</source>
        <translation>Nach Person, Aktion, Objekt oder Details filtern</translation>
    </message>
    <message>
        <source>Nothing happened in this period.</source>
        <translation>In diesem Zeitraum ist nichts geschehen.</translation>
    </message>
    <message>
        <source>Last hour</source>
        <translation>Letzte Stunde</translation>
    </message>
    <message>
        <source>Last 24 hours</source>
        <translation>Letzte 24 Stunden</translation>
    </message>
    <message>
        <source>Last 7 days</source>
        <translation>Letzte 7 Tage</translation>
    </message>
    <message>
        <source>Last 90 days</source>
        <translation>Letzte 90 Tage</translation>
    </message>
    <message>
        <source>Reload</source>
        <translation>Neu laden</translation>
    </message>
    <message>
        <source>Audit log</source>
        <translation>Audit-Protokoll</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::BindDialog</name>
    <message>
        <source>Request a device for %1</source>
        <translation>Gerät für %1 anfragen</translation>
    </message>
    <message>
        <source>Request %1</source>
        <translation>%1 anfragen</translation>
    </message>
    <message>
        <source>Bind a device to %1</source>
        <translation>Gerät an %1 binden</translation>
    </message>
    <message>
        <source>Bind %1</source>
        <translation>%1 binden</translation>
    </message>
    <message>
        <source>Bind</source>
        <translation>Binden</translation>
    </message>
    <message>
        <source>Request</source>
        <translation>Anfragen</translation>
    </message>
    <message>
        <source>&amp;Forwarder:</source>
        <translation>&amp;Forwarder:</translation>
    </message>
    <message>
        <source>/srv/projects/…</source>
        <translation>/srv/projects/…</translation>
    </message>
    <message>
        <source>any executor</source>
        <translation>beliebiger Executor</translation>
    </message>
    <message>
        <source>A preset, or a duration such as 90m, 12h or 1d12h; at most 90 days</source>
        <translation>Eine Vorgabe oder eine Dauer wie 90m, 12h oder 1d12h; höchstens 90 Tage</translation>
    </message>
    <message>
        <source>none (DHCP or static inside)</source>
        <translation>keine (DHCP oder statisch in der Sandbox)</translation>
    </message>
    <message>
        <source>&amp;Project:</source>
        <translation>&amp;Projekt:</translation>
    </message>
    <message>
        <source>&amp;Executor:</source>
        <translation>&amp;Executor:</translation>
    </message>
    <message>
        <source>&amp;How long:</source>
        <translation>&amp;Dauer:</translation>
    </message>
    <message>
        <source>&amp;Address:</source>
        <translation>&amp;Adresse:</translation>
    </message>
    <message>
        <source>what the device is needed for</source>
        <translation>wofür das Gerät gebraucht wird</translation>
    </message>
    <message>
        <source>&amp;Reason:</source>
        <translation>&amp;Begründung:</translation>
    </message>
    <message>
        <source>There is no forwarder to choose; enroll one first.</source>
        <translation>Es gibt keinen Forwarder zur Auswahl; bitte zuerst einen registrieren.</translation>
    </message>
    <message>
        <source>Choose the project whose runs get the device.</source>
        <translation>Das Projekt auswählen, dessen Läufe das Gerät erhalten sollen.</translation>
    </message>
    <message>
        <source>A project is named by its absolute path, such as /srv/projects/bench.</source>
        <translation>Ein Projekt wird mit seinem absoluten Pfad angegeben, etwa /srv/projects/bench.</translation>
    </message>
    <message>
        <source>How long: write a duration such as 8h, 90m or 1d12h.</source>
        <translation>Dauer: Eine Zeitspanne wie 8h, 90m oder 1d12h angeben.</translation>
    </message>
    <message>
        <source>How long: a binding lasts at most 90 days.</source>
        <translation>Dauer: Eine Bindung gilt höchstens 90 Tage.</translation>
    </message>
    <message>
        <source>Interface: %1</source>
        <translation>Schnittstelle: %1</translation>
    </message>
    <message>
        <source>Address: %1</source>
        <translation>Adresse: %1</translation>
    </message>
    <message>
        <source>Say what the device is needed for; the approver reads it.</source>
        <translation>Bitte angeben, wofür das Gerät gebraucht wird; die genehmigende Person liest es.</translation>
    </message>
    <message>
        <source>&amp;Sandbox interface:</source>
        <translation>&amp;Sandbox-Schnittstelle:</translation>
    </message>
    <message>
        <source>for %1 from its approval</source>
        <translation>für %1 ab der Genehmigung</translation>
    </message>
    <message>
        <source>until %1 (%2)</source>
        <translation>bis %1 (%2)</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::EnrollDialog</name>
    <message>
        <source>Enroll a forwarder</source>
        <translation>Forwarder registrieren</translation>
    </message>
    <message>
        <source>Enroll</source>
        <translation>Registrieren</translation>
    </message>
    <message>
        <source>&amp;USB device</source>
        <translation>&amp;USB-Gerät</translation>
    </message>
    <message>
        <source>&amp;Network segment</source>
        <translation>Netz&amp;segment</translation>
    </message>
    <message>
        <source>bench-hsm</source>
        <translation>bench-hsm</translation>
    </message>
    <message>
        <source>&amp;Name:</source>
        <translation>&amp;Name:</translation>
    </message>
    <message>
        <source>Carries:</source>
        <translation>Leitet weiter:</translation>
    </message>
    <message>
        <source>&amp;Device:</source>
        <translation>&amp;Gerät:</translation>
    </message>
    <message>
        <source>vendor:product[:serial], such as 1050:0407</source>
        <translation>vendor:product[:serial], etwa 1050:0407</translation>
    </message>
    <message>
        <source>interface name, such as eth1</source>
        <translation>Schnittstellenname, etwa eth1</translation>
    </message>
    <message>
        <source>Give the forwarder a name.</source>
        <translation>Bitte dem Forwarder einen Namen geben.</translation>
    </message>
    <message>
        <source>A name is 1 to 63 of a–z, 0–9, &apos;.&apos;, &apos;_&apos; and &apos;-&apos;.</source>
        <translation>Ein Name besteht aus 1 bis 63 der Zeichen a–z, 0–9, &apos;.&apos;, &apos;_&apos; und &apos;-&apos;.</translation>
    </message>
    <message>
        <source>Which USB device: vendor:product, and the serial when several are alike.</source>
        <translation>Welches USB-Gerät: vendor:product, bei mehreren gleichartigen Geräten zusätzlich die Seriennummer.</translation>
    </message>
    <message>
        <source>Which network interface the forwarder carries.</source>
        <translation>Welche Netzwerkschnittstelle der Forwarder weiterleitet.</translation>
    </message>
    <message>
        <source>A USB device is four hex digits, a colon, four hex digits, and optionally a colon and its serial.</source>
        <translation>Ein USB-Gerät besteht aus vier Hex-Ziffern, einem Doppelpunkt, vier Hex-Ziffern und optional einem Doppelpunkt mit der Seriennummer.</translation>
    </message>
    <message>
        <source>New enrollment command for %1</source>
        <translation>Neuer Registrierungsbefehl für %1</translation>
    </message>
    <message>
        <source>Issue command</source>
        <translation>Befehl ausstellen</translation>
    </message>
    <message>
        <source>%1 has not connected yet. Its earlier command stops working, and a new single-use command is issued for the same forwarder.</source>
        <translation>%1 hat sich noch nicht verbunden. Sein bisheriger Befehl wird ungültig, und für denselben Forwarder wird ein neuer Befehl ausgestellt, der nur ein einziges Mal funktioniert.</translation>
    </message>
    <message>
        <source>the machine the device is attached to</source>
        <translation>dem Rechner, an den das Gerät angeschlossen ist</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::EnrollmentCommandView</name>
    <message>
        <source>Run this once on %1. It works a single time.</source>
        <translation>Diesen Befehl einmal auf %1 ausführen. Er funktioniert nur ein einziges Mal.</translation>
    </message>
    <message>
        <source>Or, as root, install it there as the service that starts with the machine:</source>
        <translation>Oder ihn dort als root als Dienst einrichten, der mit dem Rechner startet:</translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation>&amp;Kopieren</translation>
    </message>
    <message>
        <source>C&amp;opy</source>
        <translation>K&amp;opieren</translation>
    </message>
    <message>
        <source>Valid until %1.</source>
        <translation>Gültig bis %1.</translation>
    </message>
    <message>
        <source>The earlier command no longer works.</source>
        <translation>Der frühere Befehl funktioniert nicht mehr.</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::EnrollmentDialog</name>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ExecutorEnrollDialog</name>
    <message>
        <source>Enroll an executor</source>
        <translation>Einen Executor registrieren</translation>
    </message>
    <message>
        <source>Enroll</source>
        <translation>Registrieren</translation>
    </message>
    <message>
        <source>New enrollment command for %1</source>
        <translation>Neuer Registrierungsbefehl für %1</translation>
    </message>
    <message>
        <source>Issue command</source>
        <translation>Befehl ausstellen</translation>
    </message>
    <message>
        <source>the machine that will run sandboxes</source>
        <translation>dem Rechner, der die Sandboxes ausführen wird</translation>
    </message>
    <message>
        <source>buildbox</source>
        <translation>buildbox</translation>
    </message>
    <message>
        <source>%1 has not connected yet. Its earlier command stops working, and a new single-use command is issued for the same executor.</source>
        <translation>%1 hat sich noch nicht verbunden. Sein bisheriger Befehl wird ungültig, und für denselben Executor wird ein neuer Einmalbefehl ausgestellt.</translation>
    </message>
    <message>
        <source>&amp;Name:</source>
        <translation>&amp;Name:</translation>
    </message>
    <message>
        <source>Give the executor a name.</source>
        <translation>Bitte dem Executor einen Namen geben.</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ExecutorsPage</name>
    <message>
        <source>not reported yet</source>
        <translation>noch nicht gemeldet</translation>
    </message>
    <message>
        <source>%1: yes</source>
        <translation>%1: ja</translation>
    </message>
    <message>
        <source>%1: no</source>
        <translation>%1: nein</translation>
    </message>
    <message>
        <source>%1: no (%2)</source>
        <translation>%1: nein (%2)</translation>
    </message>
    <message numerus="yes">
        <source>%n CPUs</source>
        <translation>
            <numerusform>%n CPU</numerusform>
            <numerusform>%n CPUs</numerusform>
        </translation>
    </message>
    <message>
        <source>segments</source>
        <translation>Netzsegmente</translation>
    </message>
    <message>
        <source>USB</source>
        <translation>USB</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>State</source>
        <translation>Status</translation>
    </message>
    <message>
        <source>connected</source>
        <translation>verbunden</translation>
    </message>
    <message>
        <source>Version</source>
        <translation>Version</translation>
    </message>
    <message>
        <source>Protocol</source>
        <translation>Protokoll</translation>
    </message>
    <message>
        <source>Last seen</source>
        <translation>Zuletzt gesehen</translation>
    </message>
    <message>
        <source>Can do</source>
        <translation>Fähigkeiten</translation>
    </message>
    <message>
        <source>Filter by name, state or capability</source>
        <translation>Nach Name, Status oder Fähigkeit filtern</translation>
    </message>
    <message>
        <source>No executors yet. Enroll one with: cloop executor enroll --name NAME</source>
        <translation>Noch keine Executors. Einen registrieren mit: cloop executor enroll --name NAME</translation>
    </message>
    <message>
        <source>Executors</source>
        <translation>Executors</translation>
    </message>
    <message>
        <source>connected via %1</source>
        <translation>verbunden über %1</translation>
    </message>
    <message>
        <source>upgrading</source>
        <translation>Upgrade läuft</translation>
    </message>
    <message>
        <source>&amp;Upgrade…</source>
        <translation>&amp;Upgrade…</translation>
    </message>
    <message>
        <source>Ask the selected executor to upgrade from the hub&apos;s releases</source>
        <translation>Den ausgewählten Executor auffordern, ein Upgrade aus den Releases des Hubs durchzuführen</translation>
    </message>
    <message>
        <source>—</source>
        <translation>—</translation>
    </message>
    <message>
        <source>never</source>
        <translation>nie</translation>
    </message>
    <message>
        <source>+ &amp;Enroll executor</source>
        <translation>+ Executor &amp;registrieren</translation>
    </message>
    <message>
        <source>New enrollment &amp;command…</source>
        <translation>Neuer Registrierungs&amp;befehl…</translation>
    </message>
    <message>
        <source>&amp;Revoke…</source>
        <translation>&amp;Widerrufen…</translation>
    </message>
    <message>
        <source>Select an executor first</source>
        <translation>Zuerst einen Executor auswählen</translation>
    </message>
    <message>
        <source>%1 is revoked</source>
        <translation>%1 ist widerrufen</translation>
    </message>
    <message>
        <source>%1 has enrolled: revoke it and enroll a new one instead</source>
        <translation>%1 ist bereits registriert: stattdessen widerrufen und einen neuen registrieren</translation>
    </message>
    <message>
        <source>Issue a new one-time command (the earlier one stops working)</source>
        <translation>Einen neuen Einmalbefehl ausstellen (der bisherige wird ungültig)</translation>
    </message>
    <message>
        <source>Cut it off for good</source>
        <translation>Endgültig aussperren</translation>
    </message>
    <message>
        <source>Revoke %1</source>
        <translation>%1 widerrufen</translation>
    </message>
    <message>
        <source>%1 is cut off for good: its credential stops working, its runs end, and it can never connect again.</source>
        <translation>%1 wird endgültig ausgesperrt: Seine Zugangsdaten werden ungültig, seine Läufe enden, und er kann sich nie wieder verbinden.</translation>
    </message>
    <message>
        <source>Revoke</source>
        <translation>Widerrufen</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::FormDialog</name>
    <message>
        <source>Asking the hub…</source>
        <translation>Anfrage an den Hub…</translation>
    </message>
    <message>
        <source>The hub refused: %1</source>
        <translation>Der Hub hat abgelehnt: %1</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ForwarderCard</name>
    <message>
        <source>Bind…</source>
        <translation>Binden…</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>Testen</translation>
    </message>
    <message>
        <source>Bound to %1</source>
        <translation>Gebunden an %1</translation>
    </message>
    <message>
        <source>on %1 only</source>
        <translation>nur auf %1</translation>
    </message>
    <message>
        <source>by %1</source>
        <translation>von %1</translation>
    </message>
    <message>
        <source>Not bound</source>
        <translation>Nicht gebunden</translation>
    </message>
    <message>
        <source>Testing…</source>
        <translation>Test läuft…</translation>
    </message>
    <message>
        <source>Ask the forwarder what its device shows, without lending it</source>
        <translation>Den Forwarder fragen, was sein Gerät zeigt, ohne es zu verleihen</translation>
    </message>
    <message>
        <source>a USB device</source>
        <translation>ein USB-Gerät</translation>
    </message>
    <message>
        <source>a network segment</source>
        <translation>ein Netzsegment</translation>
    </message>
    <message>
        <source>Unbind…</source>
        <translation>Bindung lösen…</translation>
    </message>
    <message>
        <source>New enrollment command…</source>
        <translation>Neuer Registrierungsbefehl…</translation>
    </message>
    <message>
        <source>Revoke…</source>
        <translation>Widerrufen…</translation>
    </message>
    <message>
        <source>Forwarder id %1, as the CLI names it: cloop forward test %1</source>
        <translation>Forwarder-ID %1, wie die CLI sie nennt: cloop forward test %1</translation>
    </message>
    <message>
        <source>Unplugged</source>
        <translation>Abgesteckt</translation>
    </message>
    <message>
        <source>Connected, but its USB device is unplugged: runs cannot use it until it is plugged in again.</source>
        <translation>Verbunden, aber sein USB-Gerät ist abgesteckt: Läufe können es erst nutzen, wenn es wieder eingesteckt ist.</translation>
    </message>
    <message>
        <source>Live</source>
        <translation>Verbunden</translation>
    </message>
    <message>
        <source>Revoked %1</source>
        <translation>Widerrufen %1</translation>
    </message>
    <message>
        <source>Revoked</source>
        <translation>Widerrufen</translation>
    </message>
    <message>
        <source>Revoked: its credential no longer works and it can never connect again.</source>
        <translation>Widerrufen: Seine Zugangsdaten sind ungültig, und er kann sich nie wieder verbinden.</translation>
    </message>
    <message>
        <source>Awaiting enrollment</source>
        <translation>Wartet auf Registrierung</translation>
    </message>
    <message>
        <source>Enrolled on the hub %1; its one-time command has not been run on its machine yet.</source>
        <translation>Am Hub registriert (%1); sein Einmalbefehl wurde auf seinem Rechner noch nicht ausgeführt.</translation>
    </message>
    <message>
        <source>Offline since %1</source>
        <translation>Offline seit %1</translation>
    </message>
    <message>
        <source>Offline</source>
        <translation>Offline</translation>
    </message>
    <message>
        <source>Not connected to the hub: runs cannot use its device.</source>
        <translation>Nicht mit dem Hub verbunden: Läufe können sein Gerät nicht nutzen.</translation>
    </message>
    <message>
        <source>until %1 (%2)</source>
        <translation>bis %1 (%2)</translation>
    </message>
    <message>
        <source>Asking the forwarder what its device shows</source>
        <translation>Der Forwarder wird gefragt, was sein Gerät zeigt</translation>
    </message>
    <message>
        <source>Not tested yet</source>
        <translation>Noch nicht getestet</translation>
    </message>
    <message>
        <source>Test asks the forwarder what its device shows, without lending it</source>
        <translation>„Testen“ fragt den Forwarder, was sein Gerät zeigt, ohne es zu verleihen</translation>
    </message>
    <message>
        <source>Passed %1</source>
        <translation>Bestanden %1</translation>
    </message>
    <message>
        <source>Failed %1</source>
        <translation>Fehlgeschlagen %1</translation>
    </message>
    <message>
        <source>Lend its device to one project&apos;s runs</source>
        <translation>Sein Gerät an die Läufe eines Projekts verleihen</translation>
    </message>
    <message>
        <source>Already bound to %1: unbind it first</source>
        <translation>Bereits an %1 gebunden: zuerst die Bindung lösen</translation>
    </message>
    <message>
        <source>End the binding to %1 now</source>
        <translation>Die Bindung an %1 jetzt beenden</translation>
    </message>
    <message>
        <source>Nothing is bound</source>
        <translation>Es ist nichts gebunden</translation>
    </message>
    <message>
        <source>It has not connected yet: run its enrollment command first</source>
        <translation>Er hat sich noch nicht verbunden: zuerst seinen Registrierungsbefehl ausführen</translation>
    </message>
    <message>
        <source>It is offline: only a connected forwarder can be tested</source>
        <translation>Er ist offline: Nur ein verbundener Forwarder kann getestet werden</translation>
    </message>
    <message>
        <source>A Test is running</source>
        <translation>Ein Test läuft</translation>
    </message>
    <message>
        <source>Issue a new one-time command (the earlier one stops working)</source>
        <translation>Einen neuen Einmalbefehl ausstellen (der bisherige wird ungültig)</translation>
    </message>
    <message>
        <source>Cut it off for good</source>
        <translation>Endgültig aussperren</translation>
    </message>
    <message>
        <source>Its session is held by hub member %1.</source>
        <translation>Seine Sitzung hält das Hub-Mitglied %1.</translation>
    </message>
    <message>
        <source>Connected to the hub.</source>
        <translation>Mit dem Hub verbunden.</translation>
    </message>
    <message>
        <source>sandbox interface %1</source>
        <translation>Sandbox-Schnittstelle %1</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ForwardersClient</name>
    <message>
        <source>Problem on the forwarder: %1</source>
        <translation>Problem auf dem Forwarder: %1</translation>
    </message>
    <message>
        <source>no details</source>
        <translation>keine Details</translation>
    </message>
    <message>
        <source>link up</source>
        <translation>Link aktiv</translation>
    </message>
    <message>
        <source>up, no carrier</source>
        <translation>aktiv, kein Trägersignal</translation>
    </message>
    <message>
        <source>link down</source>
        <translation>Link inaktiv</translation>
    </message>
    <message>
        <source>%1 device answered</source>
        <translation>Gerät vom Typ %1 hat geantwortet</translation>
    </message>
    <message numerus="yes">
        <source>Exports %1 · %2:%3%4 · %5 · %n interface(s)</source>
        <translation>
            <numerusform>Exportiert %1 · %2:%3%4 · %5 · %n Schnittstelle</numerusform>
            <numerusform>Exportiert %1 · %2:%3%4 · %5 · %n Schnittstellen</numerusform>
        </translation>
    </message>
    <message>
        <source>Test failed: %1</source>
        <translation>Test fehlgeschlagen: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n frame(s) in %1 s</source>
        <translation>
            <numerusform>%n Frame in %1 s</numerusform>
            <numerusform>%n Frames in %1 s</numerusform>
        </translation>
    </message>
    <message>
        <source>hub round trip %1 ms</source>
        <translation>Hub-Umlaufzeit %1 ms</translation>
    </message>
    <message>
        <source>link state unknown</source>
        <translation>Link-Status unbekannt</translation>
    </message>
    <message>
        <source>MTU %1</source>
        <translation>MTU %1</translation>
    </message>
    <message>
        <source>untagged</source>
        <translation>ungetaggt</translation>
    </message>
    <message>
        <source>VLAN %1</source>
        <translation>VLAN %1</translation>
    </message>
    <message>
        <source>MAC address %1</source>
        <translation>MAC-Adresse %1</translation>
    </message>
    <message>
        <source>received %1 packets, %2 bytes, %3 dropped</source>
        <translation>empfangen: %1 Pakete, %2 Bytes, %3 verworfen</translation>
    </message>
    <message>
        <source>sent %1 packets, %2 bytes, %3 dropped</source>
        <translation>gesendet: %1 Pakete, %2 Bytes, %3 verworfen</translation>
    </message>
    <message>
        <source>ethertype %1</source>
        <translation>ethertype %1</translation>
    </message>
    <message>
        <source>Exports no device</source>
        <translation>Exportiert kein Gerät</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ForwardersPage</name>
    <message>
        <source>+ Enroll forwarder</source>
        <translation>+ Forwarder registrieren</translation>
    </message>
    <message>
        <source>Search by name, device or project</source>
        <translation>Nach Name, Gerät oder Projekt suchen</translation>
    </message>
    <message>
        <source>Device forwarders</source>
        <translation>Geräte-Forwarder</translation>
    </message>
    <message>
        <source>Cannot load the forwarders: %1</source>
        <translation>Die Forwarder können nicht geladen werden: %1</translation>
    </message>
    <message>
        <source>No forwarder matches “%1”.</source>
        <translation>Kein Forwarder passt zu „%1“.</translation>
    </message>
    <message>
        <source>No device forwarders yet. Use + Enroll forwarder to lend a USB device or a network segment to projects.</source>
        <translation>Noch keine Geräte-Forwarder. Mit „+ Forwarder registrieren“ lässt sich ein USB-Gerät oder ein Netzsegment an Projekte verleihen.</translation>
    </message>
    <message>
        <source>%1 is cut off for good: its credential stops working and it can never connect again.</source>
        <translation>%1 wird endgültig ausgesperrt: Seine Zugangsdaten werden ungültig, und er kann sich nie wieder verbinden.</translation>
    </message>
    <message>
        <source>Its binding to %1 ends, and runs using the device lose it at once.</source>
        <translation>Seine Bindung an %1 endet, und Läufe, die das Gerät nutzen, verlieren es sofort.</translation>
    </message>
    <message>
        <source>Revoke %1</source>
        <translation>%1 widerrufen</translation>
    </message>
    <message>
        <source>Revoke</source>
        <translation>Widerrufen</translation>
    </message>
    <message>
        <source>Revoked forwarders can never connect again; they are kept for the record.</source>
        <translation>Widerrufene Forwarder können sich nie wieder verbinden; sie bleiben zur Nachvollziehbarkeit erhalten.</translation>
    </message>
    <message>
        <source>Show revoked (%1)</source>
        <translation>Widerrufene anzeigen (%1)</translation>
    </message>
    <message>
        <source>Every forwarder here is revoked. Tick Show revoked to see them, or use + Enroll forwarder for a new one.</source>
        <translation>Alle Forwarder hier sind widerrufen. „Widerrufene anzeigen“ ankreuzen, um sie zu sehen, oder mit „+ Forwarder registrieren“ einen neuen anlegen.</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::MainWindow</name>
    <message>
        <source>cloop dashboard — %1</source>
        <translation>cloop dashboard — %1</translation>
    </message>
    <message>
        <source>Device forwarders</source>
        <translation>Geräte-Forwarder</translation>
    </message>
    <message>
        <source>Projects</source>
        <translation>Projekte</translation>
    </message>
    <message>
        <source>Approvals</source>
        <translation>Genehmigungen</translation>
    </message>
    <message>
        <source>Executors</source>
        <translation>Executors</translation>
    </message>
    <message>
        <source>Audit log</source>
        <translation>Audit-Protokoll</translation>
    </message>
    <message>
        <source>Approvals (%1)</source>
        <translation>Genehmigungen (%1)</translation>
    </message>
    <message>
        <source>&amp;Session</source>
        <translation>&amp;Sitzung</translation>
    </message>
    <message>
        <source>&amp;Refresh</source>
        <translation>&amp;Aktualisieren</translation>
    </message>
    <message>
        <source>Sign &amp;out</source>
        <translation>Ab&amp;melden</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <source>Signed in as %1 (hub administrator)</source>
        <translation>Angemeldet als %1 (Hub-Administrator)</translation>
    </message>
    <message>
        <source>Signed in as %1</source>
        <translation>Angemeldet als %1</translation>
    </message>
    <message>
        <source>● live</source>
        <translation>● live</translation>
    </message>
    <message>
        <source>reconnecting…</source>
        <translation>Verbindung wird wiederhergestellt…</translation>
    </message>
    <message>
        <source>not live: %1</source>
        <translation>nicht live: %1</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ProjectsPage</name>
    <message>
        <source>&amp;Request a device…</source>
        <translation>Gerät &amp;anfragen…</translation>
    </message>
    <message>
        <source>&amp;Unbind…</source>
        <translation>Bindung &amp;lösen…</translation>
    </message>
    <message>
        <source>Project</source>
        <translation>Projekt</translation>
    </message>
    <message>
        <source>Your role</source>
        <translation>Ihre Rolle</translation>
    </message>
    <message>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <source>Filter projects</source>
        <translation>Projekte filtern</translation>
    </message>
    <message>
        <source>No projects you can see.</source>
        <translation>Keine sichtbaren Projekte.</translation>
    </message>
    <message>
        <source>Until</source>
        <translation>Bis</translation>
    </message>
    <message>
        <source>Forwarder</source>
        <translation>Forwarder</translation>
    </message>
    <message>
        <source>Executor</source>
        <translation>Executor</translation>
    </message>
    <message>
        <source>any</source>
        <translation>beliebig</translation>
    </message>
    <message>
        <source>Bound by</source>
        <translation>Gebunden von</translation>
    </message>
    <message>
        <source>Filter this project&apos;s devices</source>
        <translation>Geräte dieses Projekts filtern</translation>
    </message>
    <message>
        <source>Nothing is bound to this project.</source>
        <translation>An dieses Projekt ist nichts gebunden.</translation>
    </message>
    <message>
        <source>Projects</source>
        <translation>Projekte</translation>
    </message>
    <message>
        <source>Choose a project to see its forwarded devices.</source>
        <translation>Ein Projekt auswählen, um seine weitergeleiteten Geräte zu sehen.</translation>
    </message>
    <message>
        <source>Forwarded devices of %1</source>
        <translation>Weitergeleitete Geräte von %1</translation>
    </message>
    <message>
        <source>Sandbox interface</source>
        <translation>Sandbox-Schnittstelle</translation>
    </message>
    <message>
        <source>&amp;Bind…</source>
        <translation>&amp;Binden…</translation>
    </message>
    <message>
        <source>Lend a forwarder&apos;s device to the runs of %1</source>
        <translation>Das Gerät eines Forwarders an die Läufe von %1 verleihen</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ReasonDialog</name>
    <message>
        <source>Reason (kept in the audit log)</source>
        <translation>Begründung (wird im Audit-Protokoll festgehalten)</translation>
    </message>
    <message>
        <source>Reason (optional, kept in the audit log)</source>
        <translation>Begründung (optional, wird im Audit-Protokoll festgehalten)</translation>
    </message>
    <message>
        <source>Say why, for the audit log.</source>
        <translation>Bitte eine Begründung für das Audit-Protokoll angeben.</translation>
    </message>
    <message>
        <source>Unbind %1</source>
        <translation>Bindung von %1 lösen</translation>
    </message>
    <message>
        <source>%1 stops lending its device to %2. Runs using it now lose it at once.</source>
        <translation>%1 verleiht sein Gerät nicht länger an %2. Läufe, die es gerade nutzen, verlieren es sofort.</translation>
    </message>
    <message>
        <source>Unbind</source>
        <translation>Bindung lösen</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::RecordTable</name>
    <message>
        <source>Cannot load this list: %1</source>
        <translation>Diese Liste kann nicht geladen werden: %1</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::SignInDialog</name>
    <message>
        <source>Sign in to a cloop hub</source>
        <translation>Bei einem cloop-Hub anmelden</translation>
    </message>
    <message>
        <source>Sign in</source>
        <translation>Anmelden</translation>
    </message>
    <message>
        <source>The fingerprint of the hub&apos;s key. It proves you reach your hub and not an impostor.</source>
        <translation>Der Fingerabdruck des Hub-Schlüssels. Er belegt, dass Sie mit Ihrem Hub verbunden sind und nicht mit einem Betrüger.</translation>
    </message>
    <message>
        <source>cat_… (cloop token create)</source>
        <translation>cat_… (cloop token create)</translation>
    </message>
    <message>
        <source>&amp;Hub:</source>
        <translation>&amp;Hub:</translation>
    </message>
    <message>
        <source>Key &amp;pin:</source>
        <translation>Schlüssel-&amp;Pin:</translation>
    </message>
    <message>
        <source>&amp;Token:</source>
        <translation>&amp;Token:</translation>
    </message>
    <message>
        <source>the dashboard</source>
        <translation>das Dashboard</translation>
    </message>
    <message>
        <source>Where is the hub? Its address starts with wss://.</source>
        <translation>Wo ist der Hub? Seine Adresse beginnt mit wss://.</translation>
    </message>
    <message>
        <source>Paste your API token.</source>
        <translation>Bitte Ihr API-Token einfügen.</translation>
    </message>
    <message>
        <source>Not signed in: %1</source>
        <translation>Nicht angemeldet: %1</translation>
    </message>
    <message>
        <source>&amp;Keep the token in this desktop&apos;s keyring</source>
        <translation>Token im Schlüsselbund dieses Desktops &amp;behalten</translation>
    </message>
    <message>
        <source>empty: read it from the hub first</source>
        <translation>leer: zuerst vom Hub auslesen</translation>
    </message>
    <message>
        <source>&amp;Read the hub&apos;s key</source>
        <translation>Schlüssel des Hubs &amp;auslesen</translation>
    </message>
    <message>
        <source>Reading the key the hub presents…</source>
        <translation>Der vom Hub vorgelegte Schlüssel wird gelesen…</translation>
    </message>
    <message>
        <source>Asking the hub…</source>
        <translation>Anfrage an den Hub…</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>Weiter</translation>
    </message>
    <message>
        <source>Signed in as %1. The token was not kept: %2. You will be asked for it next time.</source>
        <translation>Angemeldet als %1. Das Token wurde nicht behalten: %2. Beim nächsten Mal wird erneut danach gefragt.</translation>
    </message>
    <message>
        <source>The hub presents this key:</source>
        <translation>Der Hub zeigt diesen Schlüssel:</translation>
    </message>
    <message>
        <source>Compare it with what cloop hub pin prints on the hub, or with what its administrator gave you. Sign in only if they are the same.</source>
        <translation>Mit der Ausgabe von cloop hub pin auf dem Hub vergleichen, oder mit dem, was sein Administrator mitgeteilt hat. Nur anmelden, wenn beide gleich sind.</translation>
    </message>
    <message>
        <source>&amp;Trust this key and sign in</source>
        <translation>Diesem Schlüssel &amp;vertrauen und anmelden</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::TimeWords</name>
    <message numerus="yes">
        <source>%n s</source>
        <translation>
            <numerusform>%n s</numerusform>
            <numerusform>%n s</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n min</source>
        <translation>
            <numerusform>%n min</numerusform>
            <numerusform>%n min</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n h</source>
        <translation>
            <numerusform>%n h</numerusform>
            <numerusform>%n h</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation>%1 h %2 min</translation>
    </message>
    <message numerus="yes">
        <source>%n days</source>
        <translation>
            <numerusform>%n Tag</numerusform>
            <numerusform>%n Tage</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n days %1 h</source>
        <translation>
            <numerusform>%n Tag %1 h</numerusform>
            <numerusform>%n Tage %1 h</numerusform>
        </translation>
    </message>
    <message>
        <source>expired</source>
        <translation>abgelaufen</translation>
    </message>
    <message>
        <source>%1 left</source>
        <translation>noch %1</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::TokenStore</name>
    <message>
        <source>the keyring holds no token for this hub</source>
        <translation>der Schlüsselbund enthält kein Token für diesen Hub</translation>
    </message>
    <message>
        <source>no keyring runs in this desktop session%1</source>
        <translation>in dieser Desktop-Sitzung läuft kein Schlüsselbund%1</translation>
    </message>
    <message>
        <source>the desktop&apos;s keyring refused access%1</source>
        <translation>der Schlüsselbund des Desktops hat den Zugriff verweigert%1</translation>
    </message>
    <message>
        <source>the desktop&apos;s keyring could not be reached%1</source>
        <translation>der Schlüsselbund des Desktops war nicht erreichbar%1</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::TrafficGraph</name>
    <message>
        <source>Traffic</source>
        <translation>Datenverkehr</translation>
    </message>
    <message>
        <source>%1 B/s</source>
        <translation>%1 B/s</translation>
    </message>
    <message>
        <source>%1/s</source>
        <translation>%1/s</translation>
    </message>
    <message>
        <source>%1 to the run</source>
        <translation>%1 zum Lauf</translation>
    </message>
    <message>
        <source>%1 from the run</source>
        <translation>%1 vom Lauf</translation>
    </message>
    <message numerus="yes">
        <source>the last %n min</source>
        <translation>
            <numerusform>der letzten Minute</numerusform>
            <numerusform>den letzten %n min</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>the last %n s</source>
        <translation>
            <numerusform>der letzten Sekunde</numerusform>
            <numerusform>den letzten %n s</numerusform>
        </translation>
    </message>
    <message>
        <source>No traffic in %1: no run used the device.</source>
        <translation>Kein Datenverkehr in %1: Kein Lauf hat das Gerät genutzt.</translation>
    </message>
    <message numerus="yes">
        <source>Over %1, in steps of %n s, at most %2 to the run and %3 from it.</source>
        <translation>
            <numerusform>In %1, in Schritten von %n s, höchstens %2 zum Lauf und %3 vom Lauf.</numerusform>
            <numerusform>In %1, in Schritten von %n s, höchstens %2 zum Lauf und %3 vom Lauf.</numerusform>
        </translation>
    </message>
    <message>
        <source>no traffic in %1</source>
        <translation>kein Datenverkehr in %1</translation>
    </message>
    <message>
        <source>%1 frames/s</source>
        <translation>%1 Frames/s</translation>
    </message>
    <message numerus="yes">
        <source>%n frames dropped</source>
        <translation>
            <numerusform>%n Frame verworfen</numerusform>
            <numerusform>%n Frames verworfen</numerusform>
        </translation>
    </message>
    <message>
        <source>No frame was dropped.</source>
        <translation>Kein Frame wurde verworfen.</translation>
    </message>
    <message>
        <source>Frames dropped: %1 on the way to the run (its forwarder&apos;s stream or socket was full), %2 on the way from it (the interface could not take them).</source>
        <translation>Verworfene Frames: %1 auf dem Weg zum Lauf (Stream oder Socket des Forwarders war voll), %2 auf dem Weg vom Lauf (die Schnittstelle konnte sie nicht aufnehmen).</translation>
    </message>
    <message numerus="yes">
        <source>%n dropped</source>
        <translation>
            <numerusform>%n verworfen</numerusform>
            <numerusform>%n verworfen</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 URBs/s</source>
        <translation>%1 URBs/s</translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::UpgradeDialog</name>
    <message>
        <source>Upgrade %1</source>
        <translation>Upgrade für %1</translation>
    </message>
    <message>
        <source>Upgrade</source>
        <translation>Upgrade starten</translation>
    </message>
    <message>
        <source>%1 runs %2 on the %3 channel.</source>
        <translation>%1 läuft mit %2 im Kanal %3.</translation>
    </message>
    <message>
        <source>an unknown version</source>
        <translation>einer unbekannten Version</translation>
    </message>
    <message>
        <source>stable</source>
        <translation>stable</translation>
    </message>
    <message>
        <source>The hub offers %1.</source>
        <translation>Der Hub bietet %1 an.</translation>
    </message>
    <message>
        <source>Its runs finish first; then its device installs the release through its root helper, and rolls back by itself if the new version does not come back.</source>
        <translation>Zuerst werden seine Läufe abgeschlossen; dann installiert sein Gerät das Release über seinen Root-Helper und setzt es von selbst zurück, falls die neue Version nicht wieder startet.</translation>
    </message>
    <message>
        <source>latest, a release such as 0.4.0, or edge:COMMIT</source>
        <translation>latest, ein Release wie etwa 0.4.0, oder edge:COMMIT</translation>
    </message>
    <message>
        <source>Give latest, a release such as 0.4.0, or edge: and 7 to 40 hex digits.</source>
        <translation>Bitte latest, ein Release wie etwa 0.4.0, oder edge: mit 7 bis 40 Hex-Ziffern angeben.</translation>
    </message>
    <message numerus="yes">
        <source>Accepted: it finishes its %n run(s) first, then upgrades.</source>
        <translation>
            <numerusform>Angenommen: Er schließt zuerst seinen %n Lauf ab und führt dann das Upgrade durch.</numerusform>
            <numerusform>Angenommen: Er schließt zuerst seine %n Läufe ab und führt dann das Upgrade durch.</numerusform>
        </translation>
    </message>
    <message>
        <source>Accepted: its root helper is installing it now.</source>
        <translation>Angenommen: Sein Root-Helper installiert es jetzt.</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <source>edge</source>
        <translation>edge</translation>
    </message>
    <message>
        <source>upgrading to %1</source>
        <translation>Upgrade auf %1 läuft</translation>
    </message>
    <message>
        <source>upgrade rolled back</source>
        <translation>Upgrade zurückgesetzt</translation>
    </message>
    <message>
        <source>upgrade %1</source>
        <translation>Upgrade %1</translation>
    </message>
    <message>
        <source>%1 offered</source>
        <translation>%1 angeboten</translation>
    </message>
</context>
</TS>
