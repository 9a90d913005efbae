#pragma once

#include <QString>

namespace cloop::testing {

// New TCP connections to one loopback port are reset from creation until
// destruction (root; nftables): the first SYN only, so connections already
// up go on. Its rules live in a table of its own, deleted at the end.
class ConnectionReset
{
public:
    explicit ConnectionReset(quint16 port);
    ~ConnectionReset();
    ConnectionReset(const ConnectionReset &) = delete;
    ConnectionReset &operator=(const ConnectionReset &) = delete;

    // Empty once the rule is in place; else what nft said.
    const QString &error() const { return m_error; }

private:
    QString m_table;
    QString m_error;
};

} // namespace cloop::testing
