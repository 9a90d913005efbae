// jsonListEntries: the entries of a listing found in its text are the ones
// Qt reads in the whole document, and every malformed text is refused with
// a reason.

#include "common/util/jsonlistentries.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using cloop::util::jsonListEntries;
using namespace Qt::StringLiterals;

class TestJsonListEntries : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void entriesAreTheObjectsQtReads_data();
    void entriesAreTheObjectsQtReads();
    void anAbsentListIsEmpty();
    void malformedTextIsRefusedWithItsReason_data();
    void malformedTextIsRefusedWithItsReason();
    void deepNestingIsReadWithoutRecursion();
    void aLongListingIsFoundWhole();
};

namespace {

QJsonArray entriesRead(const QByteArray &text, QLatin1StringView key)
{
    auto entries = jsonListEntries(text, key);
    if (!entries) {
        qWarning() << entries.error().message;
        return {};
    }
    QJsonArray read;
    for (const QByteArrayView entry : std::as_const(*entries)) {
        QJsonParseError error {};
        const QJsonDocument document = QJsonDocument::fromJson(entry.toByteArray(), &error);
        if (error.error != QJsonParseError::NoError || !document.isObject()) {
            qWarning() << "an entry is no object:" << entry;
            return {};
        }
        read.append(document.object());
    }
    return read;
}

} // namespace

void TestJsonListEntries::entriesAreTheObjectsQtReads_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("one") << QByteArray(R"({"forwarders":[{"id":1}]})");
    QTest::newRow("whitespace everywhere")
        << QByteArray(" {\n \"forwarders\" :\t[ { \"id\" : 1 } ,\r\n{\"id\":2} ] } \n");
    QTest::newRow("other members before and after")
        << QByteArray(R"({"a":[{"id":9}],"forwarders":[{"id":1},{"id":2}],"b":{"forwarders":[]}})");
    QTest::newRow("brackets and quotes inside strings")
        << QByteArray(R"({"forwarders":[{"name":"a}],{\"b","x":"]"},{"n":"\\"}]})");
    QTest::newRow("nested objects and lists") << QByteArray(
        R"({"forwarders":[{"device":{"kind":"usb","ids":[1,[2,{"x":{}}]]},"up":null}]})");
    QTest::newRow("UTF-8 and escapes")
        << QByteArray("{\"forwarders\":[{\"name\":\"Z\xc3\xbcrich \\u6771\\ud83d\\udd0c\"}]}");
    QTest::newRow("empty list") << QByteArray(R"({"forwarders":[]})");
    QTest::newRow("empty objects") << QByteArray(R"({"forwarders":[{},{}]})");
}

void TestJsonListEntries::entriesAreTheObjectsQtReads()
{
    QFETCH(QByteArray, text);
    const QJsonArray expected
        = QJsonDocument::fromJson(text).object().value("forwarders"_L1).toArray();
    auto entries = jsonListEntries(text, "forwarders"_L1);
    QVERIFY2(entries, qPrintable(entries ? QString() : entries.error().message));
    QCOMPARE(entries->size(), expected.size());
    QCOMPARE(entriesRead(text, "forwarders"_L1), expected);
    // Each span is a slice of the text itself, not a copy.
    for (const QByteArrayView entry : std::as_const(*entries)) {
        QVERIFY(entry.data() >= text.constData());
        QVERIFY(entry.data() + entry.size() <= text.constData() + text.size());
    }
}

void TestJsonListEntries::anAbsentListIsEmpty()
{
    auto entries = jsonListEntries(R"({"executors":[{"id":1}]})", "forwarders"_L1);
    QVERIFY(entries);
    QVERIFY(entries->isEmpty());
}

void TestJsonListEntries::malformedTextIsRefusedWithItsReason_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("reason");
    QTest::newRow("empty") << QByteArray() << u"not JSON"_s;
    QTest::newRow("a list, not an object") << QByteArray(R"([{"id":1}])") << u"not a JSON object"_s;
    QTest::newRow("a number") << QByteArray("7") << u"not a JSON object"_s;
    QTest::newRow("truncated") << QByteArray(R"({"forwarders":[{"id":1},{"id":)") << u"not JSON"_s;
    QTest::newRow("trailing garbage") << QByteArray(R"({"forwarders":[]} x)") << u"not JSON"_s;
    QTest::newRow("two documents") << QByteArray(R"({"forwarders":[]}{})") << u"not JSON"_s;
    QTest::newRow("trailing comma") << QByteArray(R"({"forwarders":[{"id":1},]})") << u"not JSON"_s;
    QTest::newRow("bad escape") << QByteArray(R"({"forwarders":[{"n":"\q"}]})") << u"not JSON"_s;
    QTest::newRow("bad UTF-8") << QByteArray("{\"forwarders\":[{\"n\":\"\xc3\x28\"}]}")
                               << u"not JSON"_s;
    QTest::newRow("bad literal elsewhere")
        << QByteArray(R"({"other":tru,"forwarders":[]})") << u"not JSON"_s;
    QTest::newRow("the list is null")
        << QByteArray(R"({"forwarders":null})") << u"\"forwarders\" is not a list"_s;
    QTest::newRow("the list is an object")
        << QByteArray(R"({"forwarders":{"id":1}})") << u"\"forwarders\" is not a list"_s;
    QTest::newRow("an entry is a number") << QByteArray(R"({"forwarders":[{"id":1},2]})")
                                          << u"entry 2 of \"forwarders\" is not an object"_s;
    QTest::newRow("an entry is a list") << QByteArray(R"({"forwarders":[[{"id":1}]]})")
                                        << u"entry 1 of \"forwarders\" is not an object"_s;
    QTest::newRow("the list twice") << QByteArray(R"({"forwarders":[{"id":1}],"forwarders":[]})")
                                    << u"\"forwarders\" appears twice"_s;
}

void TestJsonListEntries::malformedTextIsRefusedWithItsReason()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, reason);
    auto entries = jsonListEntries(text, "forwarders"_L1);
    QVERIFY(!entries);
    QCOMPARE(entries.error().code, u"bad_answer"_s);
    QVERIFY2(entries.error().message.contains(reason), qPrintable(entries.error().message));
}

void TestJsonListEntries::deepNestingIsReadWithoutRecursion()
{
    // A million brackets would overflow a recursive reader's stack.
    constexpr int kDepth = 1'000'000;
    const QByteArray deep = QByteArray(R"({"forwarders":[{"x":)") + QByteArray(kDepth, '[')
        + QByteArray(kDepth, ']') + "}]}";
    auto entries = jsonListEntries(deep, "forwarders"_L1);
    QVERIFY(entries);
    QCOMPARE(entries->size(), 1);
    QCOMPARE(entries->first().size(), deep.size() - qsizetype(strlen(R"({"forwarders":[)")) - 2);
    auto unclosed = jsonListEntries(QByteArray(kDepth, '{'), "forwarders"_L1);
    QVERIFY(!unclosed);
}

void TestJsonListEntries::aLongListingIsFoundWhole()
{
    QJsonArray records;
    for (int i = 0; i < 2000; ++i)
        records.append(QJsonObject { { u"id"_s, i }, { u"name"_s, u"idle-%1"_s.arg(i) },
            { u"device"_s, QJsonObject { { u"kind"_s, u"usb"_s } } } });
    const QByteArray text = QJsonDocument(
        QJsonObject { { u"forwarders"_s,
            records } }).toJson(QJsonDocument::Indented);
    QCOMPARE(entriesRead(text, "forwarders"_L1), records);
}

QTEST_GUILESS_MAIN(TestJsonListEntries)
#include "tst_jsonlistentries.moc"
