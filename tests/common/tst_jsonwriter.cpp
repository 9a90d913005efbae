// JsonWriter: what it writes is the JSON Qt reads back as the same values.

#include "common/util/jsonwriter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using cloop::util::JsonWriter;
using namespace Qt::StringLiterals;

class TestJsonWriter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void scalarsAndNestingReadBackAsWritten();
    void stringsAreEscapedAndEncodedAsUtf8_data();
    void stringsAreEscapedAndEncodedAsUtf8();
    void emptyContainersAndSeparatorsAreRight();
    void qtValuesKeepTheirNumbersAndTrees();
    void qtTreesAreWrittenByteForByteAsQtWritesThem();
    void aWrittenObjectIsReadBackWhole();
};

namespace {

QJsonDocument parsed(const QByteArray &written)
{
    QJsonParseError error {};
    const QJsonDocument document = QJsonDocument::fromJson(written, &error);
    if (error.error != QJsonParseError::NoError)
        qWarning() << "not JSON:" << error.errorString() << written;
    return document;
}

} // namespace

void TestJsonWriter::scalarsAndNestingReadBackAsWritten()
{
    QByteArray written;
    JsonWriter out(written);
    out.beginObject();
    out.field("id"_L1, qint64(9'007'199'254'740'993));
    out.field("small"_L1, -7);
    out.field("yes"_L1, true);
    out.field("no"_L1, false);
    out.nullField("nothing"_L1);
    out.field("name"_L1, u"lab3"_s);
    out.key("list"_L1).beginArray();
    out.value(1);
    out.beginObject();
    out.field("inner"_L1, "x"_L1);
    out.endObject();
    out.null();
    out.endArray();
    out.endObject();

    QCOMPARE(written,
        QByteArray(R"({"id":9007199254740993,"small":-7,"yes":true,"no":false,"nothing":null,)"
                   R"("name":"lab3","list":[1,{"inner":"x"},null]})"));
    const QJsonObject object = parsed(written).object();
    QCOMPARE(object.value("id"_L1).toInteger(), qint64(9'007'199'254'740'993));
    QCOMPARE(
        object.value("list"_L1).toArray().at(1).toObject().value("inner"_L1).toString(), u"x"_s);
    QVERIFY(object.value("nothing"_L1).isNull());
}

void TestJsonWriter::stringsAreEscapedAndEncodedAsUtf8_data()
{
    QTest::addColumn<QString>("text");
    QTest::newRow("empty") << QString();
    QTest::newRow("quote and backslash") << u"say \"hi\" \\ there"_s;
    QTest::newRow("control characters") << u"a\nb\rc\td\be\ff\x01g\x1fh"_s;
    QTest::newRow("Latin-1 and beyond") << u"Zürich – 東京"_s;
    QTest::newRow("outside the BMP") << QString::fromUtf8("plug \xF0\x9F\x94\x8C in");
    QTest::newRow("escape at both ends") << u"\"middle\n"_s;
}

void TestJsonWriter::stringsAreEscapedAndEncodedAsUtf8()
{
    QFETCH(QString, text);
    QByteArray written;
    JsonWriter out(written);
    out.beginArray();
    out.value(text);
    out.value(QLatin1StringView(text.toLatin1()));
    out.endArray();
    // Raw control characters are never written.
    for (const char c : written)
        QVERIFY2(static_cast<unsigned char>(c) >= 0x20, written.constData());
    const QJsonArray array = parsed(written).array();
    QCOMPARE(array.size(), 2);
    QCOMPARE(array.at(0).toString(), text);
    QCOMPARE(array.at(1).toString(), QString::fromLatin1(text.toLatin1()));
}

void TestJsonWriter::emptyContainersAndSeparatorsAreRight()
{
    QByteArray written;
    JsonWriter out(written);
    out.beginObject();
    out.key("a"_L1).beginArray();
    out.endArray();
    out.key("o"_L1).beginObject();
    out.endObject();
    out.key("n"_L1).beginArray();
    out.beginArray();
    out.endArray();
    out.beginArray();
    out.value(2);
    out.endArray();
    out.endArray();
    out.endObject();
    QCOMPARE(written, QByteArray(R"({"a":[],"o":{},"n":[[],[2]]})"));
}

void TestJsonWriter::qtValuesKeepTheirNumbersAndTrees()
{
    const QJsonObject tree { { u"kind"_s, u"usb"_s },
        { u"ports"_s, QJsonArray { 1, 2.5, u"x"_s, QJsonValue::Null } } };
    QByteArray written;
    JsonWriter out(written);
    out.beginObject();
    out.field("tree"_L1, QJsonValue(tree));
    out.field("half"_L1, QJsonValue(0.5));
    out.field("big"_L1, QJsonValue(qint64(1) << 40));
    out.field("absent"_L1, QJsonValue(QJsonValue::Undefined));
    out.field("text"_L1, QJsonValue(u"t"_s));
    out.endObject();
    const QJsonObject object = parsed(written).object();
    QCOMPARE(object.value("tree"_L1).toObject(), tree);
    QCOMPARE(object.value("half"_L1).toDouble(), 0.5);
    QCOMPARE(object.value("big"_L1).toInteger(), qint64(1) << 40);
    QVERIFY(object.value("absent"_L1).isNull());
    QCOMPARE(object.value("text"_L1).toString(), u"t"_s);
}

void TestJsonWriter::qtTreesAreWrittenByteForByteAsQtWritesThem()
{
    // Written member by member, not through a QJsonDocument: the bytes
    // must still be the ones Qt writes, keys in Qt's order included.
    const QJsonObject tree { { u"zeta"_s, 1 }, { u"alpha"_s, QJsonObject {} },
        { u"say \"x\"\n"_s, u"Zürich – 東京"_s },
        { u"nested"_s,
            QJsonObject { { u"list"_s,
                              QJsonArray { QJsonArray {}, QJsonObject { { u"b"_s, false } }, -2.25,
                                  qint64(1) << 53, QJsonValue::Null } },
                { u"a"_s, u"tab\there"_s } } } };
    QByteArray written;
    JsonWriter out(written);
    out.value(QJsonValue(tree));
    QCOMPARE(written, QJsonDocument(tree).toJson(QJsonDocument::Compact));
    written.clear();
    JsonWriter list(written);
    list.value(QJsonValue(tree.value("nested"_L1).toObject().value("list"_L1)));
    QCOMPARE(written, QByteArray(R"([[],{"b":false},-2.25,9007199254740992,null])"));
}

void TestJsonWriter::aWrittenObjectIsReadBackWhole()
{
    const QJsonObject object = cloop::util::writtenObject([](JsonWriter &out) {
        out.beginObject();
        out.field("id"_L1, 4);
        out.field("name"_L1, u"bench \"A\""_s);
        out.endObject();
    });
    QCOMPARE(object, (QJsonObject { { u"id"_s, 4 }, { u"name"_s, u"bench \"A\""_s } }));
}

QTEST_GUILESS_MAIN(TestJsonWriter)
#include "tst_jsonwriter.moc"
