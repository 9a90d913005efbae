// The admin API's record types (common/api): each survives toJson and
// fromJson unchanged, reads what absent and null fields mean, and refuses a
// field of the wrong shape naming it. tests/hub/tst_apirecordsfromhub.cpp
// feeds the hub's own answers through the same types.

#include "common/api/apitoken.h"
#include "common/api/approval.h"
#include "common/api/auditlogentry.h"
#include "common/api/binding.h"
#include "common/api/bindingrequest.h"
#include "common/api/devicetest.h"
#include "common/api/enrollment.h"
#include "common/api/eventstreammessage.h"
#include "common/api/executor.h"
#include "common/api/forwarder.h"
#include "common/api/forwardertraffic.h"
#include "common/api/identity.h"
#include "common/api/project.h"
#include "common/api/run.h"
#include "common/api/runlogpage.h"
#include "common/api/user.h"
#include "common/api/virtualexecutor.h"

#include <QJsonDocument>
#include <QTest>

using namespace cloop;
using namespace cloop::api;

namespace {

QDateTime at(int minutes)
{
    return QDateTime(QDate(2026, 11, 29), QTime(17, 34, 42, 305), Qt::UTC).addSecs(minutes * 60);
}

// Every field set to something other than its default.
Forwarder usbForwarder()
{
    Forwarder forwarder;
    forwarder.id = 3;
    forwarder.name = QStringLiteral("bench-hsm");
    forwarder.state = EnrolledDaemon::State::Connected;
    forwarder.connected = true;
    forwarder.hubMember = QStringLiteral("hub.example.org:7443");
    forwarder.lastSeen = at(0);
    forwarder.createdAt = at(-60);
    forwarder.createdBy = QStringLiteral("user:admin");
    forwarder.enrolledAt = at(-50);
    forwarder.revokedAt = at(10);
    forwarder.device = *protocol::DeviceSpec::parseUsb(QStringLiteral("1050:0407:A1"));
    forwarder.deviceDescription = QStringLiteral("usb 1050:0407:A1");
    forwarder.usbBusId = QStringLiteral("1-1.4");
    return forwarder;
}

Executor executor()
{
    Executor executor;
    executor.id = 1;
    executor.name = QStringLiteral("buildbox");
    executor.state = EnrolledDaemon::State::Disconnected;
    executor.lastSeen = at(-5);
    executor.createdAt = at(-60);
    executor.createdBy = QStringLiteral("user:admin");
    executor.enrolledAt = at(-59);
    executor.version = QStringLiteral("0.1.0");
    executor.protocolVersion = 25;
    executor.reportedCapabilities = { { QStringLiteral("os"), QStringLiteral("linux") } };
    return executor;
}

Binding binding()
{
    Binding binding;
    binding.id = 7;
    binding.forwarderId = 3;
    binding.forwarder = QStringLiteral("lab");
    binding.project = QStringLiteral("/srv/projects/bench");
    binding.virtualExecutor = QStringLiteral("ci");
    binding.target = QStringLiteral("eth1");
    binding.address = QStringLiteral("10.77.0.2/24");
    binding.createdAt = at(0);
    binding.createdBy = QStringLiteral("user:alice");
    binding.expiresAt = at(480);
    binding.requestId = 4;
    binding.state = Binding::State::ForwarderRevoked;
    binding.endedAt = at(60);
    binding.endedBy = QStringLiteral("user:admin");
    binding.endReason = QStringLiteral("bench returned");
    return binding;
}

BindingRequest request()
{
    BindingRequest request;
    request.id = 4;
    request.forwarderId = 3;
    request.forwarder = QStringLiteral("lab");
    request.project = QStringLiteral("/srv/projects/bench");
    request.requestedBy = QStringLiteral("maria");
    request.reason = QStringLiteral("tonight's run");
    request.ttl = QStringLiteral("8h");
    request.ttlSeconds = 28800;
    request.virtualExecutor = QStringLiteral("ci");
    request.target = QStringLiteral("fwd0");
    request.address = QStringLiteral("10.77.0.2/24");
    request.createdAt = at(0);
    request.expiresAt = at(7 * 24 * 60);
    request.state = BindingRequest::State::Approved;
    request.decidedBy = QStringLiteral("alice");
    request.decidedAt = at(5);
    request.decisionReason = QStringLiteral("fine");
    request.bindingId = 7;
    return request;
}

Run run()
{
    Run run;
    run.id = 5;
    run.project = QStringLiteral("/srv/projects/bench");
    run.requestedBy = QStringLiteral("user:maria");
    run.executorId = 1;
    run.virtualExecutor = QStringLiteral("ci");
    run.runtime = QStringLiteral("crun");
    run.image = QStringLiteral("busybox:1.36");
    run.argv = { QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("make test") };
    run.hostProcess = true;
    run.state = Run::State::Failed;
    run.exitCode = 2;
    run.error = QStringLiteral("the engine said no");
    run.createdAt = at(0);
    run.dispatchedAt = at(1);
    run.startedAt = at(2);
    run.finishedAt = at(3);
    run.finished = true;
    return run;
}

RunLogPage logPage()
{
    RunLogPage page;
    page.records = { { 0, protocol::LogRecordKind::Stdout, "hello\n", 0, {} },
        { 6, protocol::LogRecordKind::Gap, {}, 4096, RunLogPage::Entry::DroppedBy::Agent },
        { 4102, protocol::LogRecordKind::Stderr, QByteArray("\0\xff", 2), 0, {} } };
    page.end = 4104;
    page.expectedEnd = 4104;
    page.complete = true;
    page.finished = true;
    return page;
}

Project project()
{
    return Project { 2, QStringLiteral("/srv/projects/bench"), at(0), QStringLiteral("user:admin"),
        { { QStringLiteral("alice"), ProjectRole::Administrator },
            { QStringLiteral("maria"), ProjectRole::Maintainer } } };
}

Identity identity()
{
    return Identity { QStringLiteral("alice"), true, 4,
        { { QStringLiteral("/srv/projects/bench"), ProjectRole::Administrator } } };
}

DeviceTestReport segmentReport()
{
    DeviceTestReport report;
    report.kind = protocol::DeviceSpec::Kind::Segment;
    report.ok = true;
    report.interfaceName = QStringLiteral("eth1");
    report.link = DeviceTestReport::Link { true, true, 1500, QStringLiteral("02:00:00:00:00:01") };
    report.counters = DeviceTestReport::Counters { 1, 2, 3, 4, 5, 6 };
    report.listenedMs = 1500;
    report.framesSeen = 12;
    report.frames = { { 60, QStringLiteral("02:00:00:00:00:02"),
                          QStringLiteral("ff:ff:ff:ff:ff:ff"), QStringLiteral("0x0806"), 7,
                          QStringLiteral("ARP who-has 192.0.2.1 tell 192.0.2.2") },
        { 12, {}, {}, {}, std::nullopt, {} } };
    return report;
}

DeviceTestReport usbReport()
{
    DeviceTestReport report;
    report.kind = protocol::DeviceSpec::Kind::Usb;
    report.ok = true;
    report.devices = { { QStringLiteral("1-1"), QStringLiteral("/sys/devices/pci0000:00/usb1/1-1"),
        QStringLiteral("1050"), QStringLiteral("0407"), QStringLiteral("0100"),
        QStringLiteral("full"), QStringLiteral("00"), 1,
        { { QStringLiteral("03"), QStringLiteral("01"), QStringLiteral("01") } } } };
    return report;
}

template <typename Record> void roundTrip(const Record &record)
{
    const QJsonObject json = record.toJson();
    const auto read = Record::fromJson(json);
    QVERIFY2(read, qPrintable(read ? QString() : read.error().message));
    QVERIFY2(*read == record, QJsonDocument(json).toJson(QJsonDocument::Compact).constData());
    QCOMPARE(read->toJson(), json);
}

// The record read from `json` must fail naming `field`.
template <typename Record> void refused(const QJsonObject &json, const QString &field)
{
    const auto read = Record::fromJson(json);
    QVERIFY2(!read, QJsonDocument(json).toJson(QJsonDocument::Compact).constData());
    QCOMPARE(read.error().code, QStringLiteral("invalid_record"));
    QVERIFY2(read.error().message.contains(QLatin1Char('"') + field + QLatin1Char('"')),
        qPrintable(read.error().message));
}

template <typename Record>
QJsonObject with(const Record &record, const QString &key, const QJsonValue &value)
{
    QJsonObject json = record.toJson();
    json.insert(key, value);
    return json;
}

} // namespace

class TestApiRecords : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyRecordRoundTrips();
    void emptyRecordsRoundTrip();
    void absentAndNullFieldsAreEmpty();
    void aForwarderSaysWhereItsDeviceIs();
    void aDeviceThisVersionCannotReadLeavesTheRecord();
    void wrongShapesAreRefusedNamingTheField();
    void statesAndRolesAreNamedOnce();
    void listsAreReadWhole();
    void eventStreamMessagesRoundTrip();
    void eventStreamMessagesRefuseWhatTheyCannotBe();
    void auditEntriesReadAsWords();
    void trafficIsReadStepByStep();
    void trafficOfTheWrongShapeIsRefused_data();
    void trafficOfTheWrongShapeIsRefused();
};

void TestApiRecords::everyRecordRoundTrips()
{
    roundTrip(usbForwarder());
    Forwarder segment = usbForwarder();
    segment.device = *protocol::DeviceSpec::parseInterface(QStringLiteral("eth1"));
    segment.usbBusId.reset();
    roundTrip(segment);
    roundTrip(executor());
    roundTrip(VirtualExecutor { 9, QStringLiteral("ci"), 1, QStringLiteral("buildbox"),
        QStringLiteral("crun"), at(0), QStringLiteral("user:admin") });
    roundTrip(ForwarderEnrollment { usbForwarder(), QStringLiteral("cloopfwd1.x"),
        QStringLiteral("cloop forward --token-file forwarder.bundle"),
        QStringLiteral("cloop forward install --token-file forwarder.bundle"), at(1440) });
    roundTrip(ExecutorEnrollment { executor(), QStringLiteral("cloopexe1.x"),
        QStringLiteral("cloop executor agent --token-file agent.bundle"),
        QStringLiteral("cloop executor agent install --token-file agent.bundle"), at(1440) });
    roundTrip(binding());
    roundTrip(request());
    roundTrip(run());
    roundTrip(logPage());
    roundTrip(project());
    roundTrip(User { 4, QStringLiteral("alice"), true, at(0) });
    roundTrip(
        ApiToken { 4, QStringLiteral("alice"), QStringLiteral("laptop"), at(0), at(9), true });
    roundTrip(ApiToken { 5, QStringLiteral("alice"), QString(), at(0), {}, std::nullopt });
    roundTrip(identity());
    roundTrip(AuditLogEntry { 12, at(0), QStringLiteral("user:alice"),
        QStringLiteral("forwarder.bind"), QStringLiteral("forwarder:3"),
        { { QStringLiteral("ttl"), QStringLiteral("8h") } }, QStringLiteral("lab"), QString() });
    roundTrip(AuditLogEntry { 13, at(1), QStringLiteral("executor:2"),
        QStringLiteral("executor.upgrade.outcome"), QStringLiteral("executor:2"), {},
        QStringLiteral("ci-1"), QStringLiteral("ci-1") });
}

void TestApiRecords::emptyRecordsRoundTrip()
{
    // What a default record writes (nulls for what it lacks) reads back as it.
    roundTrip(Forwarder {});
    roundTrip(Executor {});
    roundTrip(VirtualExecutor {});
    roundTrip(Binding {});
    roundTrip(BindingRequest {});
    roundTrip(Run {});
    roundTrip(RunLogPage {});
    roundTrip(Project {});
    roundTrip(User {});
    roundTrip(ApiToken {});
    roundTrip(Identity {});
    roundTrip(AuditLogEntry {});
}

void TestApiRecords::absentAndNullFieldsAreEmpty()
{
    // Given part of a binding, as an event may carry it,
    const auto partial
        = Binding::fromJson({ { QStringLiteral("id"), 11 }, { QStringLiteral("forwarder_id"), 3 },
            { QStringLiteral("state"), QStringLiteral("active") },
            { QStringLiteral("virtual_executor"), QJsonValue() },
            { QStringLiteral("expires_at"), QStringLiteral("2026-11-30T08:00:00.000Z") } });
    // then what it names is read and the rest is empty.
    QVERIFY(partial);
    QCOMPARE(partial->id, 11);
    QVERIFY(partial->isActive());
    QCOMPARE(partial->virtualExecutor, QString());
    QCOMPARE(partial->expiresAt, QDateTime(QDate(2026, 11, 30), QTime(8, 0), Qt::UTC));
    QVERIFY(!partial->createdAt.isValid());
    QVERIFY(!partial->requestId);
    const auto nothing = Run::fromJson({});
    QVERIFY(nothing);
    QVERIFY(*nothing == Run {});
}

void TestApiRecords::aForwarderSaysWhereItsDeviceIs()
{
    Forwarder forwarder = usbForwarder();
    QVERIFY(forwarder.isUsb());
    QVERIFY(!forwarder.isUnplugged());
    // "" while unplugged, null while nobody knows: two different things.
    auto unplugged = Forwarder::fromJson(with(forwarder, QStringLiteral("usb_busid"), QString()));
    QVERIFY(unplugged);
    QCOMPARE(unplugged->usbBusId, std::optional<QString>(QString()));
    QVERIFY(unplugged->isUnplugged());
    auto unknown = Forwarder::fromJson(with(forwarder, QStringLiteral("usb_busid"), QJsonValue()));
    QVERIFY(unknown);
    QVERIFY(!unknown->usbBusId);
    QVERIFY(!unknown->isUnplugged());
}

void TestApiRecords::aDeviceThisVersionCannotReadLeavesTheRecord()
{
    const auto forwarder = Forwarder::fromJson(with(usbForwarder(), QStringLiteral("device"),
        QJsonObject { { QStringLiteral("kind"), QStringLiteral("bluetooth") } }));
    QVERIFY(forwarder);
    QVERIFY(!forwarder->device);
    QCOMPARE(forwarder->deviceDescription, QStringLiteral("usb 1050:0407:A1"));
    QCOMPARE(forwarder->name, QStringLiteral("bench-hsm"));
}

void TestApiRecords::wrongShapesAreRefusedNamingTheField()
{
    refused<Forwarder>(
        with(usbForwarder(), QStringLiteral("id"), QStringLiteral("3")), QStringLiteral("id"));
    refused<Forwarder>(
        with(usbForwarder(), QStringLiteral("connected"), 1), QStringLiteral("connected"));
    refused<Forwarder>(with(usbForwarder(), QStringLiteral("device"), QStringLiteral("usb")),
        QStringLiteral("device"));
    refused<Executor>(with(executor(), QStringLiteral("capabilities"), QJsonArray {}),
        QStringLiteral("capabilities"));
    refused<Binding>(with(binding(), QStringLiteral("expires_at"), QStringLiteral("tomorrow")),
        QStringLiteral("expires_at"));
    refused<Binding>(with(binding(), QStringLiteral("id"), 1.5), QStringLiteral("id"));
    refused<Binding>(with(binding(), QStringLiteral("state"), QStringLiteral("paused")),
        QStringLiteral("state"));
    refused<BindingRequest>(with(request(), QStringLiteral("binding_id"), QStringLiteral("7")),
        QStringLiteral("binding_id"));
    refused<Run>(with(run(), QStringLiteral("argv"), QJsonArray { 1, 2 }), QStringLiteral("argv"));
    refused<Run>(with(run(), QStringLiteral("id"), 1e300), QStringLiteral("id"));
    refused<Project>(with(project(), QStringLiteral("members"),
                         QJsonArray { QJsonObject { { QStringLiteral("user"), QStringLiteral("x") },
                             { QStringLiteral("role"), QStringLiteral("owner") } } }),
        QStringLiteral("role"));
    refused<Identity>(
        with(identity(), QStringLiteral("roles"), QStringLiteral("all")), QStringLiteral("roles"));
    refused<ApiToken>(with(ApiToken {}, QStringLiteral("current"), QStringLiteral("yes")),
        QStringLiteral("current"));
    refused<AuditLogEntry>(
        with(AuditLogEntry {}, QStringLiteral("details"), 5), QStringLiteral("details"));
    refused<RunLogPage>(
        with(logPage(), QStringLiteral("records"),
            QJsonArray { QJsonObject { { QStringLiteral("stream"), QStringLiteral("stdin") } } }),
        QStringLiteral("stream"));
    refused<DeviceTestReport>(with(segmentReport(), QStringLiteral("link"),
                                  QJsonObject { { QStringLiteral("mtu"), QStringLiteral("big") } }),
        QStringLiteral("mtu"));
    refused<DeviceTestReport>(
        with(usbReport(), QStringLiteral("devices"), QJsonArray { 1 }), QStringLiteral("devices"));
    refused<ForwarderEnrollment>(with(ForwarderEnrollment {}, QStringLiteral("forwarder"),
                                     QJsonObject { { QStringLiteral("id"), QStringLiteral("x") } }),
        QStringLiteral("id"));
}

void TestApiRecords::statesAndRolesAreNamedOnce()
{
    QCOMPARE(EnrolledDaemon::stateName(EnrolledDaemon::State::AwaitingEnrollment),
        QLatin1String("awaiting_enrollment"));
    QCOMPARE(EnrolledDaemon::parseState(u"revoked"), EnrolledDaemon::State::Revoked);
    QVERIFY(!EnrolledDaemon::parseState(u"sleeping"));
    QCOMPARE(
        Binding::stateName(Binding::State::ForwarderRevoked), QLatin1String("forwarder_revoked"));
    QCOMPARE(
        BindingRequest::stateName(BindingRequest::State::Cancelled), QLatin1String("cancelled"));
    QCOMPARE(Run::stateName(Run::State::Lost), QLatin1String("lost"));
    QCOMPARE(projectRoleName(ProjectRole::Maintainer), QLatin1String("maintainer"));
    QCOMPARE(parseProjectRole(u"administrator"), ProjectRole::Administrator);
    QVERIFY(!parseProjectRole(u"none"));
    QCOMPARE(identity().roleIn(QStringLiteral("/srv/projects/bench")), ProjectRole::Administrator);
    QVERIFY(!identity().roleIn(QStringLiteral("/srv/projects/other")));
}

void TestApiRecords::listsAreReadWhole()
{
    const QJsonObject answer { { QStringLiteral("bindings"),
        QJsonArray { binding().toJson(), Binding {}.toJson() } } };
    const auto bindings = listOf<Binding>(answer, QLatin1StringView("bindings"));
    QVERIFY(bindings);
    QCOMPARE(bindings->size(), 2);
    QVERIFY(bindings->first() == binding());
    QVERIFY(listOf<Binding>(QJsonObject {}, QLatin1StringView("bindings"))->isEmpty());
    QJsonObject broken = answer;
    broken.insert(QStringLiteral("bindings"),
        QJsonArray { binding().toJson(), with(binding(), QStringLiteral("state"), 3) });
    QVERIFY(!listOf<Binding>(broken, QLatin1StringView("bindings")));
    QVERIFY(!listOf<Binding>(
        QJsonObject { { QStringLiteral("bindings"), 3 } }, QLatin1StringView("bindings")));
}

void TestApiRecords::eventStreamMessagesRoundTrip()
{
    using Message = EventStreamMessage;
    roundTrip(Message::subscribe(QStringLiteral("tok-1")));
    roundTrip(Message::subscribed(QStringLiteral("alice")));
    roundTrip(Message::eventOf(QStringLiteral("binding.created"), at(2), binding().toJson()));
    roundTrip(Message::error(Error::make(QStringLiteral("forbidden"), QStringLiteral("no role"))));
    const auto text = Message::fromText(Message::subscribe(QStringLiteral("t")).toText().toUtf8());
    QVERIFY(text);
    QCOMPARE(text->type, Message::Type::Subscribe);
    QCOMPARE(text->token, QStringLiteral("t"));
    const auto ended = Message::fromText(
        R"({"type":"error","code":"revoked","message":"the token was revoked","permanent":true})");
    QVERIFY(ended);
    QCOMPARE(ended->type, Message::Type::Error);
    QCOMPARE(ended->code, QStringLiteral("revoked"));
    QVERIFY(ended->permanent);
}

void TestApiRecords::eventStreamMessagesRefuseWhatTheyCannotBe()
{
    using Message = EventStreamMessage;
    refused<Message>(QJsonObject { { QStringLiteral("type"), QStringLiteral("welcome") } },
        QStringLiteral("type"));
    refused<Message>(QJsonObject {}, QStringLiteral("type"));
    refused<Message>(QJsonObject { { QStringLiteral("type"), QStringLiteral("subscribe") },
                         { QStringLiteral("token"), 7 } },
        QStringLiteral("token"));
    refused<Message>(with(Message::eventOf(QStringLiteral("run.started"), at(0), {}),
                         QStringLiteral("data"), QStringLiteral("not an object")),
        QStringLiteral("data"));
    for (const QByteArray &text : { QByteArray("not json"), QByteArray("[1,2]"), QByteArray() }) {
        const auto read = Message::fromText(text);
        QVERIFY2(!read, text.constData());
        QCOMPARE(read.error().code, QStringLiteral("invalid_record"));
    }
}

void TestApiRecords::auditEntriesReadAsWords()
{
    using cloop::api::describeAuditDetails;
    QCOMPARE(describeAuditDetails({}), QStringLiteral("-"));
    // Plain values as they are, text with spaces or quotes in quotes, null left out.
    QCOMPARE(
        describeAuditDetails(QJsonObject { { QStringLiteral("ttl"), QStringLiteral("8h") },
            { QStringLiteral("reason"), QStringLiteral("bench \"back\"") },
            { QStringLiteral("gone"), QJsonValue::Null }, { QStringLiteral("hub_admin"), false } }),
        QStringLiteral("hub_admin=false reason=\"bench \\\"back\\\"\" ttl=8h"));
    // A nested object's fields are named by their path, not shown as JSON.
    const QJsonObject enrolled { { QStringLiteral("device"),
        QJsonObject { { QStringLiteral("kind"), QStringLiteral("l2") },
            { QStringLiteral("interface"), QStringLiteral("eth1") } } } };
    QCOMPARE(
        describeAuditDetails(enrolled), QStringLiteral("device.interface=eth1 device.kind=l2"));

    cloop::api::AuditLogEntry entry;
    entry.subject = QStringLiteral("forwarder:3");
    QCOMPARE(entry.describeSubject(), QStringLiteral("forwarder:3"));
    entry.subjectName = QStringLiteral("lab");
    QCOMPARE(entry.describeSubject(), QStringLiteral("forwarder lab (#3)"));
    // The name travels as subject_name, left out when there is none.
    const auto read = cloop::api::AuditLogEntry::fromJson(entry.toJson());
    QVERIFY(read);
    QCOMPARE(read->subjectName, QStringLiteral("lab"));
    entry.subjectName.clear();
    QVERIFY(!entry.toJson().contains(QLatin1String("subject_name")));
    // The actor is named the same way, as actor_name.
    entry.actor = QStringLiteral("executor:2");
    QCOMPARE(entry.describeActor(), QStringLiteral("executor:2"));
    entry.actorName = QStringLiteral("ci-1");
    QCOMPARE(entry.describeActor(), QStringLiteral("executor ci-1 (#2)"));
    const auto withActor = cloop::api::AuditLogEntry::fromJson(entry.toJson());
    QVERIFY(withActor);
    QCOMPARE(withActor->actorName, QStringLiteral("ci-1"));
}

namespace {
QJsonObject trafficAnswer(const QJsonArray &toAgent, const QJsonArray &toForwarder, int steps = 3)
{
    return { { QStringLiteral("step_seconds"), 5 }, { QStringLiteral("steps"), steps },
        { QStringLiteral("until"), QStringLiteral("2026-12-06T10:00:05.000Z") },
        { QStringLiteral("items"),
            QJsonArray { QJsonObject { { QStringLiteral("forwarder_id"), 3 },
                { QStringLiteral("to_agent_bytes"), toAgent },
                { QStringLiteral("to_forwarder_bytes"), toForwarder } } } } };
}
} // namespace

void TestApiRecords::trafficIsReadStepByStep()
{
    using cloop::api::ForwarderTraffic;
    const auto read = ForwarderTraffic::fromJson(
        trafficAnswer(QJsonArray { 0, 4096, 1e15 }, QJsonArray { 1, 2, 3 }));
    QVERIFY2(read, qPrintable(read ? QString() : read.error().message));
    QCOMPARE(read->stepSeconds, 5);
    QCOMPARE(read->until, QDateTime(QDate(2026, 12, 6), QTime(10, 0, 5), Qt::UTC));
    QVERIFY(read->itemOf(3));
    QCOMPARE(read->itemOf(3)->toAgentBytes, (QList<qint64> { 0, 4096, qint64(1e15) }));
    QCOMPARE(read->itemOf(3)->toForwarderBytes, (QList<qint64> { 1, 2, 3 }));
    QVERIFY(!read->itemOf(4));
    QVERIFY(!read->itemOf(3)->countsFrames());
    // A segment's forwarder says frames and drops: four more lists.
    QJsonObject withFrames = trafficAnswer(QJsonArray { 1, 2, 3 }, QJsonArray { 1, 2, 3 });
    QJsonObject item = withFrames.value(QLatin1String("items")).toArray().first().toObject();
    for (const char *key :
        { "to_agent_frames", "to_forwarder_frames", "dropped_to_agent", "dropped_to_forwarder" })
        item.insert(QLatin1String(key), QJsonArray { 0, 5, 7 });
    item.insert(QStringLiteral("unit"), QStringLiteral("urbs"));
    withFrames.insert(QStringLiteral("items"), QJsonArray { item });
    const auto segment = ForwarderTraffic::fromJson(withFrames);
    QVERIFY2(segment, qPrintable(segment ? QString() : segment.error().message));
    QVERIFY(segment->itemOf(3)->countsFrames());
    QVERIFY(segment->itemOf(3)->urbs);
    QCOMPARE(segment->itemOf(3)->droppedToForwarder, (QList<qint64> { 0, 5, 7 }));
    // Counts of something this version does not know are refused.
    QJsonObject unknownUnit = item;
    unknownUnit.insert(QStringLiteral("unit"), QStringLiteral("packets"));
    withFrames.insert(QStringLiteral("items"), QJsonArray { unknownUnit });
    QVERIFY(!ForwarderTraffic::fromJson(withFrames));
    // One of them short is refused, naming it.
    item.insert(QStringLiteral("dropped_to_agent"), QJsonArray { 0, 5 });
    withFrames.insert(QStringLiteral("items"), QJsonArray { item });
    const auto short_ = ForwarderTraffic::fromJson(withFrames);
    QVERIFY(!short_);
    QVERIFY2(short_.error().message.contains(QLatin1String("dropped_to_agent")),
        qPrintable(short_.error().message));
    // Before the hub's first step: no time, no steps, no items.
    const auto first = ForwarderTraffic::fromJson({ { QStringLiteral("step_seconds"), 5 },
        { QStringLiteral("steps"), 0 }, { QStringLiteral("until"), QJsonValue::Null },
        { QStringLiteral("items"), QJsonArray {} } });
    QVERIFY(first);
    QVERIFY(!first->until.isValid());
}

void TestApiRecords::trafficOfTheWrongShapeIsRefused_data()
{
    QTest::addColumn<QJsonObject>("answer");
    QTest::addColumn<QString>("named");
    QTest::newRow("a step short") << trafficAnswer(QJsonArray { 1, 2 }, QJsonArray { 1, 2, 3 })
                                  << QStringLiteral("to_agent_bytes");
    QTest::newRow("negative") << trafficAnswer(QJsonArray { 1, -2, 3 }, QJsonArray { 1, 2, 3 })
                              << QStringLiteral("to_agent_bytes");
    QTest::newRow("a fraction") << trafficAnswer(QJsonArray { 1, 2, 3 }, QJsonArray { 1, 2.5, 3 })
                                << QStringLiteral("to_forwarder_bytes");
    QTest::newRow("text") << trafficAnswer(
        QJsonArray { 1, QStringLiteral("2"), 3 }, QJsonArray { 1, 2, 3 })
                          << QStringLiteral("to_agent_bytes");
    QTest::newRow("too many steps")
        << trafficAnswer(QJsonArray {}, QJsonArray {}, 10'001) << QStringLiteral("steps");
    QJsonObject noStep = trafficAnswer(QJsonArray { 1, 2, 3 }, QJsonArray { 1, 2, 3 });
    noStep.insert(QStringLiteral("step_seconds"), 0);
    QTest::newRow("no step") << noStep << QStringLiteral("step_seconds");
}

void TestApiRecords::trafficOfTheWrongShapeIsRefused()
{
    QFETCH(QJsonObject, answer);
    QFETCH(QString, named);
    const auto read = cloop::api::ForwarderTraffic::fromJson(answer);
    QVERIFY(!read);
    QVERIFY2(read.error().message.contains(named), qPrintable(read.error().message));
}

QTEST_GUILESS_MAIN(TestApiRecords)
#include "tst_apirecords.moc"
