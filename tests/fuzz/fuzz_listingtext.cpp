// libFuzzer target: the reader that finds the entries of a long listing in
// the hub's answer without building its tree (the CLI's `forward list`).
//
// Input: the answer's text, the list under "items". Invariants: a refusal
// says why; found entries are slices of the text, in order, apart, each an
// object in brackets; and whenever Qt reads the whole text as an object,
// the entries are exactly the objects it reads under "items".

#include <cstddef>
#include <cstdint>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "common/util/jsonlistentries.h"
#include "fuzzcheck.h"

using cloop::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray text(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const auto entries = cloop::util::jsonListEntries(text, QLatin1StringView("items"));
    if (!entries) {
        check(!entries.error().message.isEmpty(), "a refusal says why");
        check(entries.error().code == QLatin1String("bad_answer"), "a refusal is a bad answer");
        return 0;
    }
    const char *after = text.constData();
    for (const QByteArrayView entry : *entries) {
        check(entry.data() >= after, "entries are in order and apart");
        check(entry.data() + entry.size() <= text.constData() + text.size(),
            "an entry lies within the text");
        check(entry.startsWith('{') && entry.endsWith('}'), "an entry is an object's text");
        after = entry.data() + entry.size();
    }
    QJsonParseError wholeError {};
    const QJsonDocument whole = QJsonDocument::fromJson(text, &wholeError);
    if (wholeError.error != QJsonParseError::NoError)
        return 0; // Qt refuses some text RapidJSON reads (deep nesting): no reference
    check(whole.isObject(), "what Qt reads is the object the entries came from");
    const QJsonArray expected = whole.object().value(QLatin1String("items")).toArray();
    check(expected.size() == entries->size(), "as many entries as Qt reads");
    for (qsizetype i = 0; i < entries->size(); ++i) {
        const QJsonDocument one = QJsonDocument::fromJson(entries->at(i).toByteArray());
        check(one.isObject() && one.object() == expected.at(i).toObject(),
            "each entry is the object Qt reads there");
    }
    return 0;
}
