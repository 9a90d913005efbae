#pragma once

#include <QString>
#include <QTest>

// A failed Result fails the test with its message, not just "false".
// `result` is evaluated once: a statement given here runs once.
#define CLOOP_VERIFY_OK(result)                                                                    \
    do {                                                                                           \
        const auto &verifiedResult = (result);                                                     \
        QVERIFY2(verifiedResult.ok(),                                                              \
            qPrintable(verifiedResult.ok() ? QString() : verifiedResult.error().message));         \
    } while (false)
