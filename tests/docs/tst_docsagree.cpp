// docs/api.md and docs/protocol.md are checked against the types the code
// speaks: the protocol number, the fields of every record the admin API
// shows (common/api), the events of the event stream and the error codes
// code decides on. A field added to a record, a protocol bump or a new event
// fails here until the page says it.

#include "common/api/binding.h"
#include "common/api/bindingrequest.h"
#include "common/api/executor.h"
#include "common/api/forwarder.h"
#include "common/api/hubeventname.h"
#include "common/api/run.h"
#include "common/errorcode.h"
#include "common/protocol/protocolversion.h"

#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace cloop;

namespace {

QString readDoc(const QString &name)
{
    const QString root = qEnvironmentVariable("CLOOP_SOURCE_DIR");
    QFile file(root + QStringLiteral("/docs/") + name);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

// The ```json block that follows the line "Name:" on the page.
QString exampleOf(const QString &page, const QString &record)
{
    const QRegularExpression block(
        QStringLiteral("^%1:\\n\\n```json\\n(.*?)\\n```").arg(QRegularExpression::escape(record)),
        QRegularExpression::MultilineOption | QRegularExpression::DotMatchesEverythingOption);
    return block.match(page).captured(1);
}

// The keys of the outermost object in `json`, which may hold "…" where a
// value is left out (so it is read as text, not parsed).
QSet<QString> outerKeys(const QString &json)
{
    QSet<QString> keys;
    int depth = 0;
    bool inString = false;
    QString current;
    for (qsizetype i = 0; i < json.size(); ++i) {
        const QChar c = json.at(i);
        if (inString) {
            if (c == QLatin1Char('\\')) {
                ++i;
            } else if (c == QLatin1Char('"')) {
                inString = false;
                qsizetype next = i + 1;
                while (next < json.size() && json.at(next).isSpace())
                    ++next;
                if (depth == 1 && next < json.size() && json.at(next) == QLatin1Char(':'))
                    keys.insert(current);
            } else {
                current.append(c);
            }
            continue;
        }
        if (c == QLatin1Char('"')) {
            inString = true;
            current.clear();
        } else if (c == QLatin1Char('{') || c == QLatin1Char('[')) {
            ++depth;
        } else if (c == QLatin1Char('}') || c == QLatin1Char(']')) {
            --depth;
        }
    }
    return keys;
}

QSet<QString> keysOf(const QJsonObject &object)
{
    const QStringList keys = object.keys();
    return { keys.begin(), keys.end() };
}

QString listed(QSet<QString> keys)
{
    QStringList sorted(keys.begin(), keys.end());
    sorted.sort();
    return sorted.join(QStringLiteral(", "));
}

} // namespace

class TestDocsAgree : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void theProtocolNumberIsTheCodes();
    void recordExamplesShowEveryFieldAndNoOther_data();
    void recordExamplesShowEveryFieldAndNoOther();
    void everyEventIsDescribed();
    void everyErrorCodeCodeDecidesOnIsNamed();
    void everyPlaceTheArchitecturePageNamesExists();

private:
    QString m_api;
    QString m_protocol;
};

void TestDocsAgree::initTestCase()
{
    m_api = readDoc(QStringLiteral("api.md"));
    m_protocol = readDoc(QStringLiteral("protocol.md"));
    QVERIFY2(!m_api.isEmpty(), "docs/api.md not found under CLOOP_SOURCE_DIR");
    QVERIFY2(!m_protocol.isEmpty(), "docs/protocol.md not found under CLOOP_SOURCE_DIR");
}

void TestDocsAgree::theProtocolNumberIsTheCodes()
{
    const QRegularExpression title(QStringLiteral("^# The tunnel protocol \\(version (\\d+)\\)"),
        QRegularExpression::MultilineOption);
    const auto heading = title.match(m_protocol);
    QVERIFY2(heading.hasMatch(), "docs/protocol.md's title names no version");
    QCOMPARE(heading.captured(1).toInt(), protocol::kVersion);

    // Every example that shows a protocol number shows this one.
    const QRegularExpression example(QStringLiteral("\"protocol\":\\s*(\\d+)"));
    int examples = 0;
    for (const QString *page : { &m_api, &m_protocol }) {
        for (auto it = example.globalMatch(*page); it.hasNext();) {
            const auto match = it.next();
            ++examples;
            QVERIFY2(match.captured(1).toInt() == protocol::kVersion,
                qPrintable(QStringLiteral("an example says %1 where the code says %2")
                               .arg(match.captured(0))
                               .arg(protocol::kVersion)));
        }
    }
    QVERIFY2(examples >= 2, "the pages show no protocol number in an example any more");
}

void TestDocsAgree::recordExamplesShowEveryFieldAndNoOther_data()
{
    QTest::addColumn<QString>("record");
    QTest::addColumn<QJsonObject>("json");
    // toJson writes every field, an absent one as null, so an empty record
    // names them all.
    QTest::newRow("Forwarder") << QStringLiteral("Forwarder") << api::Forwarder {}.toJson();
    QTest::newRow("Executor") << QStringLiteral("Executor") << api::Executor {}.toJson();
    QTest::newRow("Run") << QStringLiteral("Run") << api::Run {}.toJson();
    QTest::newRow("Binding") << QStringLiteral("Binding") << api::Binding {}.toJson();
    QTest::newRow("Request") << QStringLiteral("Request") << api::BindingRequest {}.toJson();
}

void TestDocsAgree::recordExamplesShowEveryFieldAndNoOther()
{
    QFETCH(QString, record);
    QFETCH(QJsonObject, json);
    const QString example = exampleOf(m_api, record);
    QVERIFY2(!example.isEmpty(),
        qPrintable(QStringLiteral("docs/api.md has no example after \"%1:\"").arg(record)));
    const QSet<QString> documented = outerKeys(example);
    const QSet<QString> fields = keysOf(json);
    QVERIFY2(documented.contains(fields),
        qPrintable(
            QStringLiteral("the %1 example lacks %2").arg(record, listed(fields - documented))));
    QVERIFY2(fields.contains(documented),
        qPrintable(QStringLiteral("the %1 example shows %2, which the record does not have")
                       .arg(record, listed(documented - fields))));
}

void TestDocsAgree::everyEventIsDescribed()
{
    const qsizetype section = m_api.indexOf(QStringLiteral("## Event stream"));
    QVERIFY2(section >= 0, "docs/api.md has no event stream section");
    const QString stream = m_api.mid(section);
    QStringList missing;
    for (const QLatin1StringView event : api::hubeventname::kAll) {
        if (!stream.contains(QLatin1Char('`') + QString(event) + QLatin1Char('`')))
            missing << QString(event);
    }
    QVERIFY2(missing.isEmpty(),
        qPrintable(QStringLiteral("the event stream section does not describe %1")
                       .arg(missing.join(QStringLiteral(", ")))));

    // And names no event the hub does not have.
    const QSet<QString> known = [] {
        QSet<QString> names;
        for (const QLatin1StringView event : api::hubeventname::kAll)
            names.insert(QString(event));
        return names;
    }();
    const QRegularExpression row(QStringLiteral("^\\| (`[a-z_.]+`(?:, `[a-z_.]+`)*) \\|"),
        QRegularExpression::MultilineOption);
    const QRegularExpression name(QStringLiteral("`([a-z_.]+)`"));
    int rows = 0;
    for (auto it = row.globalMatch(stream); it.hasNext();) {
        ++rows;
        const QString cell = it.next().captured(1);
        for (auto names = name.globalMatch(cell); names.hasNext();) {
            const QString event = names.next().captured(1);
            QVERIFY2(known.contains(event),
                qPrintable(
                    QStringLiteral("docs/api.md describes an event %1 that api::hubeventname "
                                   "does not name")
                        .arg(event)));
        }
    }
    QVERIFY(rows > 0);
}

void TestDocsAgree::everyErrorCodeCodeDecidesOnIsNamed()
{
    // The codes a client may see: those of the admin API and of the tunnel.
    // The dispatch codes stay inside the hub (a busy device makes a run wait)
    // and the device I/O codes inside a daemon, so neither page has them.
    const ErrorCode seen[]
        = { ErrorCode::StorageError, ErrorCode::Revoked, ErrorCode::UnknownCredential };
    for (const ErrorCode code : seen) {
        const QString quoted = QLatin1Char('`') + QString(errorCodeName(code)) + QLatin1Char('`');
        QVERIFY2(m_api.contains(quoted) || m_protocol.contains(quoted),
            qPrintable(QStringLiteral("neither page names the error code %1").arg(quoted)));
    }
}

void TestDocsAgree::everyPlaceTheArchitecturePageNamesExists()
{
    const QString page = readDoc(QStringLiteral("architecture.md"));
    QVERIFY2(!page.isEmpty(), "docs/architecture.md not found");
    const QString root = qEnvironmentVariable("CLOOP_SOURCE_DIR") + QLatin1Char('/');
    const QRegularExpression path(QStringLiteral("`([a-z-]+/[A-Za-z0-9_./-]+)`"));
    int named = 0;
    for (auto it = path.globalMatch(page); it.hasNext();) {
        const QString place = it.next().captured(1);
        ++named;
        QVERIFY2(QFileInfo::exists(root + place),
            qPrintable(QStringLiteral("docs/architecture.md names %1, which is not in the tree")
                           .arg(place)));
    }
    QVERIFY(named > 20);
}

QTEST_GUILESS_MAIN(TestDocsAgree)
#include "tst_docsagree.moc"
