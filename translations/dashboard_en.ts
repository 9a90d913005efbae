<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>cloop::dashboard::ApprovalsPage</name>
    <message>
        <source>State</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>waiting for approval</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Approve…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Deny…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Forwarder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Asked by</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reason</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>For</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Executor</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Asked at</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter the requests waiting for you</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing waits for your decision.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Decided by</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Why</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter your requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You have not asked for a device.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Decided at</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter the history</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting for you</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>History</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Approvals</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deny request %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 asked for %2 for %3. They will see your reason.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deny</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>any</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Expires</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not decided yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no reason given</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ApproveDialog</name>
    <message>
        <source>Approve request %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Approve</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>as requested (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>any executor, as requested</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Forwarder:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Project:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Asked by:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Because:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;How long:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Executor:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How long: write a duration such as 4h or 90m, or keep what was requested.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>An approval may shorten the time asked for, not lengthen it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Asked for:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, on any executor</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, on %2 only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sandbox interface:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request expires:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device:</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::AuditPage</name>
    <message>
        <source>When</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Who</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Action</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Subject</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter by who, action, subject or detail</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing happened in this period.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last 24 hours</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last 7 days</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last 90 days</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Audit log</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::BindDialog</name>
    <message>
        <source>Request a device for %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bind a device to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bind %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bind</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Forwarder:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>/srv/projects/…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>any executor</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A preset, or a duration such as 90m, 12h or 1d12h; at most 90 days</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none (DHCP or static inside)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Project:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Executor:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;How long:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Address:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>what the device is needed for</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Reason:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>There is no forwarder to choose; enroll one first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the project whose runs get the device.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A project is named by its absolute path, such as /srv/projects/bench.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How long: write a duration such as 8h, 90m or 1d12h.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How long: a binding lasts at most 90 days.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Interface: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Address: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Say what the device is needed for; the approver reads it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Sandbox interface:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>for %1 from its approval</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>until %1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::EnrollDialog</name>
    <message>
        <source>Enroll a forwarder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enroll</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;USB device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Network segment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench-hsm</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Name:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Carries:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Device:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>vendor:product[:serial], such as 1050:0407</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>interface name, such as eth1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Give the forwarder a name.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A name is 1 to 63 of a–z, 0–9, &apos;.&apos;, &apos;_&apos; and &apos;-&apos;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Which USB device: vendor:product, and the serial when several are alike.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Which network interface the forwarder carries.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A USB device is four hex digits, a colon, four hex digits, and optionally a colon and its serial.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New enrollment command for %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Issue command</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 has not connected yet. Its earlier command stops working, and a new single-use command is issued for the same forwarder.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the machine the device is attached to</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::EnrollmentCommandView</name>
    <message>
        <source>Run this once on %1. It works a single time.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Or, as root, install it there as the service that starts with the machine:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>C&amp;opy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Valid until %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The earlier command no longer works.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::EnrollmentDialog</name>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ExecutorEnrollDialog</name>
    <message>
        <source>Enroll an executor</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enroll</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New enrollment command for %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Issue command</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the machine that will run sandboxes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>buildbox</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 has not connected yet. Its earlier command stops working, and a new single-use command is issued for the same executor.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Name:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Give the executor a name.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ExecutorsPage</name>
    <message>
        <source>not reported yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: yes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: no</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: no (%2)</source>
        <translation type="unfinished"></translation>
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
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>USB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>State</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>connected</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Protocol</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last seen</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Can do</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter by name, state or capability</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No executors yet. Enroll one with: cloop executor enroll --name NAME</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Executors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>connected via %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>upgrading</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Upgrade…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask the selected executor to upgrade from the hub&apos;s releases</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>—</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>never</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>+ &amp;Enroll executor</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New enrollment &amp;command…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Revoke…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select an executor first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is revoked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 has enrolled: revoke it and enroll a new one instead</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Issue a new one-time command (the earlier one stops working)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cut it off for good</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoke %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is cut off for good: its credential stops working, its runs end, and it can never connect again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoke</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::FormDialog</name>
    <message>
        <source>Asking the hub…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The hub refused: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ForwarderCard</name>
    <message>
        <source>Bind…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bound to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>on %1 only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>by %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not bound</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Testing…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask the forwarder what its device shows, without lending it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a USB device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a network segment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unbind…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New enrollment command…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoke…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Forwarder id %1, as the CLI names it: cloop forward test %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unplugged</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connected, but its USB device is unplugged: runs cannot use it until it is plugged in again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Live</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoked %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoked: its credential no longer works and it can never connect again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Awaiting enrollment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enrolled on the hub %1; its one-time command has not been run on its machine yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Offline since %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Offline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not connected to the hub: runs cannot use its device.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>until %1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Asking the forwarder what its device shows</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not tested yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test asks the forwarder what its device shows, without lending it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Passed %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lend its device to one project&apos;s runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Already bound to %1: unbind it first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>End the binding to %1 now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing is bound</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It has not connected yet: run its enrollment command first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It is offline: only a connected forwarder can be tested</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A Test is running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Issue a new one-time command (the earlier one stops working)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cut it off for good</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its session is held by hub member %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connected to the hub.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sandbox interface %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ForwardersClient</name>
    <message>
        <source>Problem on the forwarder: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>link up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>up, no carrier</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>link down</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 device answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Exports %1 · %2:%3%4 · %5 · %n interface(s)</source>
        <translation>
            <numerusform>Exports %1 · %2:%3%4 · %5 · %n interface</numerusform>
            <numerusform>Exports %1 · %2:%3%4 · %5 · %n interfaces</numerusform>
        </translation>
    </message>
    <message>
        <source>Test failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n frame(s) in %1 s</source>
        <translation>
            <numerusform>%n frame in %1 s</numerusform>
            <numerusform>%n frames in %1 s</numerusform>
        </translation>
    </message>
    <message>
        <source>hub round trip %1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>link state unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MTU %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>untagged</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>VLAN %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MAC address %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>received %1 packets, %2 bytes, %3 dropped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sent %1 packets, %2 bytes, %3 dropped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ethertype %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exports no device</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ForwardersPage</name>
    <message>
        <source>+ Enroll forwarder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search by name, device or project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device forwarders</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot load the forwarders: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No forwarder matches “%1”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No device forwarders yet. Use + Enroll forwarder to lend a USB device or a network segment to projects.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is cut off for good: its credential stops working and it can never connect again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its binding to %1 ends, and runs using the device lose it at once.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoke %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoke</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoked forwarders can never connect again; they are kept for the record.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show revoked (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every forwarder here is revoked. Tick Show revoked to see them, or use + Enroll forwarder for a new one.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::MainWindow</name>
    <message>
        <source>cloop dashboard — %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device forwarders</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Projects</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Approvals</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Executors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Audit log</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Approvals (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Refresh</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sign &amp;out</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Signed in as %1 (hub administrator)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Signed in as %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>● live</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>reconnecting…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not live: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ProjectsPage</name>
    <message>
        <source>&amp;Request a device…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Unbind…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your role</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter projects</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No projects you can see.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Until</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Forwarder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Executor</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>any</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bound by</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter this project&apos;s devices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing is bound to this project.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Projects</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a project to see its forwarded devices.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Forwarded devices of %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sandbox interface</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Bind…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lend a forwarder&apos;s device to the runs of %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::ReasonDialog</name>
    <message>
        <source>Reason (kept in the audit log)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reason (optional, kept in the audit log)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Say why, for the audit log.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unbind %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 stops lending its device to %2. Runs using it now lose it at once.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unbind</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::RecordTable</name>
    <message>
        <source>Cannot load this list: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::SignInDialog</name>
    <message>
        <source>Sign in to a cloop hub</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sign in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The fingerprint of the hub&apos;s key. It proves you reach your hub and not an impostor.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cat_… (cloop token create)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Hub:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Key &amp;pin:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Token:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the dashboard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where is the hub? Its address starts with wss://.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paste your API token.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not signed in: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Keep the token in this desktop&apos;s keyring</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>empty: read it from the hub first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Read the hub&apos;s key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading the key the hub presents…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Asking the hub…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Continue</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Signed in as %1. The token was not kept: %2. You will be asked for it next time.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The hub presents this key:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compare it with what cloop hub pin prints on the hub, or with what its administrator gave you. Sign in only if they are the same.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Trust this key and sign in</source>
        <translation type="unfinished"></translation>
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
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n days</source>
        <translation>
            <numerusform>%n day</numerusform>
            <numerusform>%n days</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n days %1 h</source>
        <translation>
            <numerusform>%n day %1 h</numerusform>
            <numerusform>%n days %1 h</numerusform>
        </translation>
    </message>
    <message>
        <source>expired</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 left</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::TokenStore</name>
    <message>
        <source>the keyring holds no token for this hub</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no keyring runs in this desktop session%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the desktop&apos;s keyring refused access%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the desktop&apos;s keyring could not be reached%1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::TrafficGraph</name>
    <message>
        <source>Traffic</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 B/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 to the run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 from the run</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>the last %n min</source>
        <translation>
            <numerusform>the last minute</numerusform>
            <numerusform>the last %n min</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>the last %n s</source>
        <translation>
            <numerusform>the last second</numerusform>
            <numerusform>the last %n s</numerusform>
        </translation>
    </message>
    <message>
        <source>No traffic in %1: no run used the device.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Over %1, in steps of %n s, at most %2 to the run and %3 from it.</source>
        <translation>
            <numerusform>Over %1, in steps of %n s, at most %2 to the run and %3 from it.</numerusform>
            <numerusform>Over %1, in steps of %n s, at most %2 to the run and %3 from it.</numerusform>
        </translation>
    </message>
    <message>
        <source>no traffic in %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 frames/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n frames dropped</source>
        <translation>
            <numerusform>%n frame dropped</numerusform>
            <numerusform>%n frames dropped</numerusform>
        </translation>
    </message>
    <message>
        <source>No frame was dropped.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Frames dropped: %1 on the way to the run (its forwarder&apos;s stream or socket was full), %2 on the way from it (the interface could not take them).</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n dropped</source>
        <translation>
            <numerusform>%n dropped</numerusform>
            <numerusform>%n dropped</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 URBs/s</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>cloop::dashboard::UpgradeDialog</name>
    <message>
        <source>Upgrade %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Upgrade</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 runs %2 on the %3 channel.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>an unknown version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The hub offers %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its runs finish first; then its device installs the release through its root helper, and rolls back by itself if the new version does not come back.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>latest, a release such as 0.4.0, or edge:COMMIT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Give latest, a release such as 0.4.0, or edge: and 7 to 40 hex digits.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Accepted: it finishes its %n run(s) first, then upgrades.</source>
        <translation>
            <numerusform>Accepted: it finishes its %n run first, then upgrades.</numerusform>
            <numerusform>Accepted: it finishes its %n runs first, then upgrades.</numerusform>
        </translation>
    </message>
    <message>
        <source>Accepted: its root helper is installing it now.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>edge</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>upgrading to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>upgrade rolled back</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>upgrade %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 offered</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
